// Tests of the Standard MIDI File reader and its schedules: exact onset frames from the ticks and tempo map, running status, loops, errors.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class MIDIFileTests: XCTestCase {
    typealias W = StandardMIDIFileWriter

    /// 480 ticks per quarter; tempo 120 BPM, 240 BPM from tick 960, 60 BPM from tick 1440.
    static let tempoFile = W(format: 1, division: 480, tracks: [
        [W.tempo(500_000, at: 0), W.tempo(250_000, at: 960), W.tempo(1_000_000, at: 1440)],
        [0, 480, 960, 1200, 1440, 1920, 2000, 2401].flatMap { W.note(60, at: $0, length: 10) },
    ], runningStatus: true)

    /// The seconds of `tick` in `tempoFile`, written out by hand from its three tempo spans.
    static func formulaSeconds(_ tick: Int) -> Double {
        let t = Double(tick)
        if tick <= 960 { return t / 480 * 0.5 }
        if tick <= 1440 { return 1.0 + (t - 960) / 480 * 0.25 }
        return 1.25 + (t - 1440) / 480 * 1.0
    }

    /// Plays `schedules` through a collector in slices of `slice` frames, returning (frame, event) of every event.
    func collect(_ schedules: [MIDITrackSchedule], frames: Int, slice: Int, from start: Int64 = 0) -> [(Int64, MIDIEvent)] {
        let collector = MIDIEventCollector(port: MIDIInputPort())
        collector.install(MIDISequenceSources(tracks: schedules))
        var out: [(Int64, MIDIEvent)] = []
        var t = start
        while t < start + Int64(frames) {
            let n = collector.collect(RenderContext(sampleTime: t, frameCount: slice, sampleRate: 48000))
            for i in 0..<n { out.append((t + Int64(collector.offset(at: i)), collector.event(at: i))) }
            t += Int64(slice)
        }
        return out
    }

    /// Every note-on sounds at round(seconds(tick) * 48000), the seconds from the three tempo
    /// spans by hand; in slices of 441 and 64 alike; and with the sequence started at 0.25 s
    /// at rate 2 anchored at frame 1000, at 1000 + round((s - 0.25) * 48000 / 2).
    func testOnsetsAreAtTheFramesTheTicksAndTempoMapGive() throws {
        let file = try MIDIFile(bytes: [UInt8](Self.tempoFile.data()), name: "tempo.mid")
        XCTAssertEqual(file.tempoChanges.map(\.tick), [0, 960, 1440])
        let ticks = [0, 480, 960, 1200, 1440, 1920, 2000, 2401]
        let expected = ticks.map { Int64((Self.formulaSeconds($0) * 48000).rounded()) }
        for slice in [441, 64] {
            let clock = MIDIPlaybackClock()
            clock.start(atSeconds: 0, rate: 1, anchorFrame: nil)
            let got = collect([file.schedule(track: 1, clock: clock)], frames: 4 * 48000, slice: slice)
            XCTAssertEqual(got.filter { $0.1.isNoteOn }.map(\.0), expected, "slice \(slice)")
            XCTAssertEqual(got.filter { $0.1.isNoteOff }.map(\.0), ticks.map { Int64((Self.formulaSeconds($0 + 10) * 48000).rounded()) })
        }
        let clock = MIDIPlaybackClock()
        clock.start(atSeconds: 0.25, rate: 2, anchorFrame: 1000)
        let got = collect([file.schedule(track: 1, clock: clock)], frames: 3 * 48000, slice: 512)
        let after = ticks.filter { Self.formulaSeconds($0) >= 0.25 }
        XCTAssertEqual(got.filter { $0.1.isNoteOn }.map(\.0), after.map { 1000 + Int64(((Self.formulaSeconds($0) - 0.25) * 48000 / 2).rounded()) })
    }

    /// A start without a frame anchors at the first slice rendered; a stop sends sustain off
    /// and all notes off on the track's channels at the next slice; events of a silenced track
    /// keep their note-offs but lose their note-ons.
    func testStartAnchorsAtTheNextSliceStopReleasesAndMuteDropsNoteOns() throws {
        let file = try MIDIFile(bytes: [UInt8](Self.tempoFile.data()), name: "tempo.mid")
        let clock = MIDIPlaybackClock()
        let schedule = file.schedule(track: 1, clock: clock)
        let collector = MIDIEventCollector(port: MIDIInputPort())
        collector.install(MIDISequenceSources(tracks: [schedule]))
        func slice(_ t: Int64) -> [(Int64, MIDIEvent)] {
            let n = collector.collect(RenderContext(sampleTime: t, frameCount: 512, sampleRate: 48000))
            return (0..<n).map { (t + Int64(collector.offset(at: $0)), collector.event(at: $0)) }
        }
        XCTAssertTrue(slice(0).isEmpty, "not started")
        clock.start(atSeconds: 0, rate: 1, anchorFrame: nil)
        XCTAssertEqual(slice(5120).map(\.0), [5120, 5620], "the note at 0 s (and its end at 500 frames) from the first slice after the start")
        XCTAssertEqual(clock.current.anchorFrame, 5120)
        clock.stop(atSeconds: 0.1)
        XCTAssertEqual(slice(5632).map(\.1), [.controlChange(channel: 0, controller: 64, value: 0), .controlChange(channel: 0, controller: 123, value: 0)])
        schedule.isSilenced = true
        clock.start(atSeconds: 0.5, rate: 1, anchorFrame: 10_000)
        let events = (0..<200).flatMap { slice(Int64(10_000 + $0 * 512)) }
        XCTAssertFalse(events.contains { $0.1.isNoteOn })
        XCTAssertEqual(events.filter { $0.1.isNoteOff }.first?.0, 10_000 + Int64(((Self.formulaSeconds(490) - 0.5) * 48000).rounded()))
    }

    /// Running status, a format 0 file, a track name, SysEx and the conversions both ways.
    func testReadsWhatTheWriterWrote() throws {
        let smf = W(format: 0, division: 96, tracks: [[
            .init(tick: 0, bytes: [0xFF, 0x03, 0x04] + Array("lead".utf8)), W.tempo(600_000, at: 0),
            .init(tick: 0, bytes: [0xF0, 0x05, 0x7E, 0x7F, 0x09, 0x01, 0xF7]),
            .init(tick: 10, bytes: [0xB1, 7, 100]), .init(tick: 10, bytes: [0xB1, 10, 20]),
            .init(tick: 300, bytes: [0xE1, 0x00, 0x50]), .init(tick: 301, bytes: [0xC1, 5]),
        ]], runningStatus: true)
        // The writer gave the SysEx a length prefix already: F0 <len> data.
        let file = try MIDIFile(bytes: [UInt8](smf.data()), name: "f0.mid")
        XCTAssertEqual(file.format, 0)
        XCTAssertEqual(file.tracks[0].name, "lead")
        XCTAssertEqual(file.tracks[0].events.map(\.tick), [0, 10, 10, 300, 301])
        XCTAssertEqual(file.tracks[0].events.map(\.event), [
            MIDIEvent(bytes: [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7])!, .controlChange(channel: 1, controller: 7, value: 100),
            .controlChange(channel: 1, controller: 10, value: 20), .pitchBend(channel: 1, value: 0x50 << 7), .programChange(channel: 1, program: 5)])
        XCTAssertEqual(file.seconds(forTick: 192), 1.2, accuracy: 1e-12)
        for b in [0.0, 0.37, 2, 11.5] { XCTAssertEqual(file.beats(forSeconds: file.seconds(forBeats: b)), b, accuracy: 1e-9) }
        let tempo = try MIDIFile(bytes: [UInt8](Self.tempoFile.data()), name: "t.mid")
        for tick in [0, 700, 960, 1100, 1440, 5000] {
            XCTAssertEqual(tempo.seconds(forTick: tick), Self.formulaSeconds(tick), accuracy: 1e-12)
            XCTAssertEqual(tempo.beats(forSeconds: Self.formulaSeconds(tick)), Double(tick) / 480, accuracy: 1e-9)
        }
    }

    /// A loop of beats 1...2 played twice more: its notes come back one and two beats later and
    /// what follows moves behind the repeats; an offset of 2 beats shifts everything by 1 s.
    func testLoopsAndOffsetsPlaceEventsInBeats() throws {
        let smf = W(format: 0, division: 480, tracks: [[0, 480, 960].flatMap { W.note(UInt8(60 + $0 / 480), at: $0, length: 240) }])
        let file = try MIDIFile(bytes: [UInt8](smf.data()), name: "loop.mid")   // 120 BPM: a beat is 0.5 s
        var p = MIDIFile.Placement()
        p.loop = (1, 1)
        p.loopCount = 2
        let t = file.timedEvents(track: 0, placement: p)
        XCTAssertEqual(zip(t.times, t.events).filter { $0.1.isNoteOn }.map { [$0.0, Double($0.1.data1)] },
                       [[0, 60], [0.5, 61], [1.0, 61], [1.5, 61], [2.0, 62]])
        var shifted = MIDIFile.Placement()
        shifted.offsetBeats = 2
        XCTAssertEqual(file.timedEvents(track: 0, placement: shifted).times.first, 1.0)
    }

    /// Damaged files are one-line errors with the byte offset.
    func testDamagedFilesAreClearErrors() throws {
        func error(_ bytes: [UInt8]) -> String {
            do { _ = try MIDIFile(bytes: [UInt8](Data(bytes)), name: "bad.mid"); return "no error" } catch { return error.description }
        }
        let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 96]
        XCTAssertEqual(error(Array("RIFF0000WAVE00".utf8)), "bad.mid: byte 0: not a Standard MIDI File (no MThd header)")
        XCTAssertEqual(error(Array("MThd".utf8) + [0, 0, 0, 6, 0, 2, 0, 1, 0, 96]), "bad.mid: byte 8: format 2 files are not supported (only 0 and 1)")
        XCTAssertEqual(error(header), "bad.mid: byte 14: the file ends after 0 of 1 tracks")
        XCTAssertEqual(error(header + Array("MTrk".utf8) + [0, 0, 0, 200, 0]), "bad.mid: byte 14: chunk of 200 bytes runs past the end of the file")
        XCTAssertEqual(error(header + Array("MTrk".utf8) + [0, 0, 0, 3, 0, 60, 100]), "bad.mid: byte 23: data byte 0x3c without a status byte")
        XCTAssertEqual(error(header + Array("MTrk".utf8) + [0, 0, 0, 6, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x90]), "bad.mid: byte 22: variable-length number longer than 4 bytes")
        XCTAssertEqual(error(header + Array("MTrk".utf8) + [0, 0, 0, 3, 0, 0x90, 60]), "bad.mid: byte 25: the track ends inside an event")
    }
}
