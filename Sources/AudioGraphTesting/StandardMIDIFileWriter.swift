// A tiny Standard MIDI File writer for tests: the files the parser, sequencer and sampler tests read, written independently of the parser.
import Foundation

/// Writes Standard MIDI Files (format 0 or 1) from events given in absolute ticks, byte by byte
/// after the SMF 1.0 specification (an independent writer: the tests' reference for what the
/// engine's parser must read). Running status is used when `runningStatus` is set.
///
/// Thread safety: a value; any thread.
public struct StandardMIDIFileWriter: Sendable {
    /// One event of a track: absolute tick and raw bytes (a channel message, or a meta event
    /// built with ``tempo(_:)``).
    public struct Event: Sendable {
        public var tick: Int
        public var bytes: [UInt8]
        public init(tick: Int, bytes: [UInt8]) {
            self.tick = tick
            self.bytes = bytes
        }
    }

    /// 0 or 1.
    public var format: Int
    /// Ticks per quarter note.
    public var division: Int
    /// The tracks, each sorted by tick by the writer.
    public var tracks: [[Event]]
    /// Whether repeated status bytes of channel messages are left out.
    public var runningStatus: Bool

    public init(format: Int, division: Int, tracks: [[Event]], runningStatus: Bool = false) {
        self.format = format
        self.division = division
        self.tracks = tracks
        self.runningStatus = runningStatus
    }

    /// A set-tempo meta event: `microsecondsPerQuarter`.
    public static func tempo(_ microsecondsPerQuarter: Int, at tick: Int) -> Event {
        Event(tick: tick, bytes: [0xFF, 0x51, 0x03, UInt8(microsecondsPerQuarter >> 16 & 0xFF),
                                  UInt8(microsecondsPerQuarter >> 8 & 0xFF), UInt8(microsecondsPerQuarter & 0xFF)])
    }

    /// A note-on / note-off pair.
    public static func note(_ key: UInt8, channel: UInt8 = 0, velocity: UInt8 = 100, at tick: Int, length: Int) -> [Event] {
        [Event(tick: tick, bytes: [0x90 | channel, key, velocity]), Event(tick: tick + length, bytes: [0x80 | channel, key, 0])]
    }

    /// A variable-length quantity.
    public static func variableLength(_ value: Int) -> [UInt8] {
        var v = value
        var out = [UInt8(v & 0x7F)]
        v >>= 7
        while v > 0 {
            out.insert(UInt8(v & 0x7F) | 0x80, at: 0)
            v >>= 7
        }
        return out
    }

    /// The file's bytes.
    public func data() -> Data {
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        var out: [UInt8] = Array("MThd".utf8) + be32(6) + be16(format) + be16(tracks.count) + be16(division)
        for track in tracks {
            var body: [UInt8] = []
            var last = 0
            var status: UInt8 = 0
            let sorted = track.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
            for e in sorted {
                body += Self.variableLength(e.tick - last)
                last = e.tick
                if runningStatus, e.bytes[0] < 0xF0, e.bytes[0] == status {
                    body += e.bytes.dropFirst()
                } else {
                    body += e.bytes
                    status = e.bytes[0] < 0xF0 ? e.bytes[0] : 0
                }
            }
            body += [0x00, 0xFF, 0x2F, 0x00]
            out += Array("MTrk".utf8) + be32(body.count) + body
        }
        return Data(out)
    }
}
