// Standard MIDI Files (type 0 and 1): parsing, the tempo map, and the tracks as events at ticks.
import AudioGraphCore
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A Standard MIDI File (SMF 1.0, format 0 or 1) read into memory: its tracks as events at
/// absolute ticks, its tempo map (every set-tempo meta event of every track, as format 1 files
/// keep them in track 0), and the conversions between ticks, beats and seconds. SMPTE time
/// division is read as a fixed number of ticks per second. Meta events other than tempo, end
/// of track and track name are dropped; system-exclusive messages longer than
/// ``MIDIEvent/maximumByteCount`` bytes are dropped (counted in ``droppedSysExCount``).
///
/// Thread safety: a value; any thread.
public struct MIDIFile: Sendable {
    /// One track: events sorted by tick (file order within a tick), its name, its end tick.
    public struct Track: Sendable {
        /// The events, at absolute ticks.
        public var events: [(tick: Int, event: MIDIEvent)]
        /// The track name meta event's text, if any.
        public var name: String?
        /// The tick of the end-of-track event (or of the last event).
        public var endTick: Int
    }

    /// The file's format (0 or 1).
    public let format: Int
    /// Ticks per quarter note (nil for SMPTE division; then ``ticksPerSecond`` is set).
    public let ticksPerQuarter: Int?
    /// Ticks per second for SMPTE division.
    public let ticksPerSecond: Double?
    /// The tracks in file order.
    public var tracks: [Track]
    /// The tempo map: (tick, microseconds per quarter note), sorted, starting at tick 0 (500000
    /// = 120 BPM when the file sets none at 0).
    public let tempoChanges: [(tick: Int, microsecondsPerQuarter: Int)]
    /// System-exclusive messages too long to keep.
    public let droppedSysExCount: Int

    /// The length in ticks: the latest end of track.
    public var lengthInTicks: Int { tracks.map(\.endTick).max() ?? 0 }

    /// Reads the file's `bytes`; `name` names the file in errors.
    /// - Throws: ``MIDIFileError`` with the byte offset and the reason (not an SMF, format 2,
    ///   truncated chunk, bad variable-length number, data byte without a status, ...).
    public init(bytes: [UInt8], name: String) throws(MIDIFileError) {
        var reader = Reader(bytes: bytes, name: name)
        guard bytes.count >= 14, bytes[0..<4].elementsEqual("MThd".utf8) else {
            throw reader.error(at: 0, "not a Standard MIDI File (no MThd header)")
        }
        reader.position = 4
        let headerLength = try reader.uint32()
        guard headerLength >= 6, headerLength <= bytes.count - 8 else { throw reader.error(at: 4, "header length \(headerLength) is invalid") }
        let format = try reader.uint16()
        let trackCount = try reader.uint16()
        let division = try reader.uint16()
        guard format <= 1 else { throw reader.error(at: 8, "format \(format) files are not supported (only 0 and 1)") }
        guard format == 1 || trackCount == 1 else { throw reader.error(at: 10, "a format 0 file has \(trackCount) tracks (must be 1)") }
        guard division != 0 else { throw reader.error(at: 12, "the time division is 0") }
        if division & 0x8000 != 0 {
            let fps = -Int(Int8(bitPattern: UInt8(division >> 8)))
            let perFrame = Int(division & 0xFF)
            guard [24, 25, 29, 30].contains(fps), perFrame > 0 else { throw reader.error(at: 12, "SMPTE division \(fps) fps × \(perFrame) is invalid") }
            ticksPerQuarter = nil
            ticksPerSecond = Double(perFrame) * (fps == 29 ? 29.97 : Double(fps))
        } else {
            ticksPerQuarter = Int(division)
            ticksPerSecond = nil
        }
        self.format = Int(format)
        reader.position = 8 + Int(headerLength)

        var tracks: [Track] = []
        var tempos: [(Int, Int, Int)] = []   // tick, order, µs
        var dropped = 0
        while tracks.count < trackCount {
            guard reader.position + 8 <= bytes.count else {
                throw reader.error(at: reader.position, "the file ends after \(tracks.count) of \(trackCount) tracks")
            }
            let chunkStart = reader.position
            let isTrack = bytes[chunkStart..<(chunkStart + 4)].elementsEqual("MTrk".utf8)
            reader.position += 4
            let length = Int(try reader.uint32())
            guard length <= bytes.count - reader.position else {
                throw reader.error(at: chunkStart, "chunk of \(length) bytes runs past the end of the file")
            }
            let end = reader.position + length
            guard isTrack else { reader.position = end; continue }   // unknown chunks are skipped
            var track = Track(events: [], name: nil, endTick: 0)
            var tick = 0
            var runningStatus: UInt8 = 0
            var ended = false
            while reader.position < end && !ended {
                let delta = try reader.variableLength(limit: end)
                tick += delta
                guard tick <= Int(Int32.max) else { throw reader.error(at: reader.position, "the track is longer than 2^31 ticks") }
                let at = reader.position
                var status = try reader.byte(limit: end)
                if status < 0x80 {
                    guard runningStatus != 0 else { throw reader.error(at: at, "data byte 0x\(String(status, radix: 16)) without a status byte") }
                    status = runningStatus
                    reader.position -= 1
                }
                switch status {
                case 0xFF:
                    let type = try reader.byte(limit: end)
                    let n = try reader.variableLength(limit: end)
                    guard n <= end - reader.position else { throw reader.error(at: at, "meta event of \(n) bytes runs past the end of its track") }
                    let payload = Array(bytes[reader.position..<(reader.position + n)])
                    reader.position += n
                    switch type {
                    case 0x51:
                        guard n == 3 else { throw reader.error(at: at, "set-tempo event with \(n) data bytes (must be 3)") }
                        let us = Int(payload[0]) << 16 | Int(payload[1]) << 8 | Int(payload[2])
                        guard us > 0 else { throw reader.error(at: at, "set-tempo event of 0 µs per quarter note") }
                        tempos.append((tick, tempos.count, us))
                    case 0x03: track.name = String(decoding: payload, as: UTF8.self)
                    case 0x2F: ended = true
                    default: break
                    }
                case 0xF0, 0xF7:
                    runningStatus = 0
                    let n = try reader.variableLength(limit: end)
                    guard n <= end - reader.position else { throw reader.error(at: at, "system-exclusive event of \(n) bytes runs past the end of its track") }
                    let payload = bytes[reader.position..<(reader.position + n)]
                    reader.position += n
                    if status == 0xF0 {
                        if let e = MIDIEvent(bytes: [0xF0] + payload), e.isSystemExclusive, payload.last == 0xF7 {
                            track.events.append((tick, e))
                        } else {
                            dropped += 1
                        }
                    }
                default:
                    guard status < 0xF0 else { throw reader.error(at: at, "status byte 0x\(String(status, radix: 16, uppercase: true)) is not allowed in a file") }
                    runningStatus = status
                    let count = MIDIEvent.channelMessageLength(status: status)
                    var data: [UInt8] = [0, 0]
                    for i in 0..<(count - 1) {
                        let b = try reader.byte(limit: end)
                        guard b < 0x80 else { throw reader.error(at: reader.position - 1, "status byte 0x\(String(b, radix: 16, uppercase: true)) where a data byte was expected") }
                        data[i] = b
                    }
                    track.events.append((tick, MIDIEvent(status: status, data1: data[0], data2: data[1])))
                }
            }
            track.endTick = tick
            reader.position = end
            tracks.append(track)
        }
        self.tracks = tracks
        var map = tempos.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { (tick: $0.0, microsecondsPerQuarter: $0.2) }
        if map.first?.tick != 0 { map.insert((0, 500_000), at: 0) }
        // Several changes at one tick: the last one holds.
        var unique: [(tick: Int, microsecondsPerQuarter: Int)] = []
        for t in map {
            if unique.last?.tick == t.tick { unique[unique.count - 1] = t } else { unique.append(t) }
        }
        tempoChanges = unique
        droppedSysExCount = dropped
    }

    /// Reads the file at `path`.
    /// - Throws: ``MIDIFileError`` naming the file.
    public init(contentsOf path: String) throws(MIDIFileError) {
        let name = FileSystemPath.lastComponent(path)
        let bytes: [UInt8]
        do { bytes = try FileSystemPath.contentsOfRegularFile(path) } catch {
            throw MIDIFileError(file: name, offset: nil, reason: error.reason == "no such file" ? "cannot read the file" : error.reason)
        }
        try self.init(bytes: bytes, name: name)
    }

    // MARK: Time

    /// Beats (quarter notes) at `tick` (SMPTE files: 2 beats per second, 120 BPM).
    public func beats(forTick tick: Double) -> Double {
        if let q = ticksPerQuarter { return tick / Double(q) }
        return tick / ticksPerSecond! * 2
    }

    /// Seconds at beat `beats` through the tempo map (exact: piecewise linear in ticks).
    public func seconds(forBeats beats: Double) -> Double {
        guard let q = ticksPerQuarter else { return beats / 2 }
        let tick = beats * Double(q)
        var seconds = 0.0
        for (i, t) in tempoChanges.enumerated() {
            let next = i + 1 < tempoChanges.count ? Double(tempoChanges[i + 1].tick) : .infinity
            let startTick = Double(t.tick)
            if tick <= startTick { break }
            let span = min(tick, next) - startTick
            seconds += span * Double(t.microsecondsPerQuarter) / 1e6 / Double(q)
        }
        return beats < 0 ? tick * Double(tempoChanges[0].microsecondsPerQuarter) / 1e6 / Double(q) : seconds
    }

    /// Beats at `seconds` through the tempo map (the inverse of ``seconds(forBeats:)``).
    public func beats(forSeconds seconds: Double) -> Double {
        guard let q = ticksPerQuarter else { return seconds * 2 }
        guard seconds > 0 else { return seconds * 2 }
        var elapsed = 0.0
        for (i, t) in tempoChanges.enumerated() {
            let secondsPerTick = Double(t.microsecondsPerQuarter) / 1e6 / Double(q)
            let next = i + 1 < tempoChanges.count ? Double(tempoChanges[i + 1].tick) : .infinity
            let spanSeconds = (next - Double(t.tick)) * secondsPerTick
            if elapsed + spanSeconds >= seconds {
                return (Double(t.tick) + (seconds - elapsed) / secondsPerTick) / Double(q)
            }
            elapsed += spanSeconds
        }
        return 0
    }

    /// Seconds at `tick`.
    public func seconds(forTick tick: Int) -> Double {
        if let s = ticksPerSecond { return Double(tick) / s }
        return seconds(forBeats: beats(forTick: Double(tick)))
    }

    /// Splits every track's channel messages into one track per channel (meta and SysEx
    /// events stay in a first track), as `smfChannelsToTracks` asks.
    public func channelsToTracks() -> MIDIFile {
        var copy = self
        var system: [(tick: Int, event: MIDIEvent)] = []
        var perChannel = [[(tick: Int, event: MIDIEvent)]](repeating: [], count: 16)
        for t in tracks {
            for e in t.events {
                if e.event.kind >= 0x80 && e.event.kind < 0xF0 { perChannel[Int(e.event.channel)].append(e) } else { system.append(e) }
            }
        }
        let end = lengthInTicks
        func sorted(_ x: [(tick: Int, event: MIDIEvent)]) -> [(tick: Int, event: MIDIEvent)] {
            x.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
        }
        copy.tracks = [Track(events: sorted(system), name: tracks.first?.name, endTick: end)]
            + perChannel.filter { !$0.isEmpty }.map { Track(events: sorted($0), name: nil, endTick: end) }
        return copy
    }
}

/// A Standard MIDI File that cannot be read: the file, the byte offset, the reason (one line).
public struct MIDIFileError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file's name.
    public let file: String
    /// The byte offset of the problem, when there is one.
    public let offset: Int?
    /// What is wrong.
    public let reason: String

    public var description: String { offset.map { "\(file): byte \($0): \(reason)" } ?? "\(file): \(reason)" }
}

/// Bounds-checked big-endian reading.
private struct Reader {
    let bytes: [UInt8]
    let name: String
    var position = 0

    func error(at offset: Int, _ reason: String) -> MIDIFileError { MIDIFileError(file: name, offset: offset, reason: reason) }

    mutating func byte(limit: Int) throws(MIDIFileError) -> UInt8 {
        guard position < limit, position < bytes.count else { throw error(at: position, "the track ends inside an event") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint16() throws(MIDIFileError) -> UInt16 {
        let a = try byte(limit: bytes.count), b = try byte(limit: bytes.count)
        return UInt16(a) << 8 | UInt16(b)
    }

    mutating func uint32() throws(MIDIFileError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 { v = v << 8 | UInt32(try byte(limit: bytes.count)) }
        return v
    }

    /// A variable-length quantity: at most 4 bytes (28 bits), as the SMF specification says.
    mutating func variableLength(limit: Int) throws(MIDIFileError) -> Int {
        let start = position
        var v = 0
        for _ in 0..<4 {
            let b = try byte(limit: limit)
            v = v << 7 | Int(b & 0x7F)
            if b & 0x80 == 0 { return v }
        }
        throw error(at: start, "variable-length number longer than 4 bytes")
    }
}
