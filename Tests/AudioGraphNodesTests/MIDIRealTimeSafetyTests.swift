// Proves the MIDI render path (event queue, collector, sequence tracks, the sampler's fluidsynth) allocates nothing and takes no lock.
import AudioGraphRealtime
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class MIDIRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
    }

    /// Two samplers (GM and a fixed preset) -> mixer -> out: 3000 slices of 256 frames with only
    /// the render calls tracked, while a control thread sends notes, controllers, pitch bends,
    /// pressure, program changes and a GM-reset SysEx (some timed, some for the next slice), a
    /// three-track sequence plays into the first (started, repositioned, rate-changed, stopped,
    /// restarted), its tracks are muted, and the gain, pan and tuning parameters move.
    func testSamplerWithNotesControllersAndASequenceAllocatesNothingAndTakesNoLock() throws {
        let sf = "/usr/share/sounds/sf2/TimGM6mb.sf2"
        let gm = try SamplerNode(id: "gm", sampleRate: 48000, properties: SamplerProperties(soundFont: sf))
        let piano = try SamplerNode(id: "piano", sampleRate: 48000, properties: SamplerProperties(soundFont: sf, program: 0))
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 2)
        let clock = MIDIPlaybackClock()
        var tracks: [MIDITrackSchedule] = []
        for t in 0..<3 {
            var times: [Double] = [], events: [MIDIEvent] = []
            for i in 0..<400 {
                let time = Double(i) * 0.05 + Double(t) * 0.013
                let ch = UInt8(t == 2 ? 9 : t), key = UInt8(40 + (i * 7 + t * 5) % 40)
                times += [time, time + 0.04]
                events += [.noteOn(channel: ch, key: key, velocity: 90), .noteOff(channel: ch, key: key)]
                if i % 10 == 0 { times.append(time); events.append(.controlChange(channel: ch, controller: 10, value: UInt8(i % 128))) }
            }
            let order = times.indices.sorted { (times[$0], $0) < (times[$1], $1) }
            tracks.append(MIDITrackSchedule(clock: clock, times: order.map { times[$0] }, events: order.map { events[$0] }))
        }
        try gm.setProperty(MIDISequenceSources.propertyName, MIDISequenceSources(tracks: tracks))
        let g = try startedGraph([gm, piano, mixer], "gm -> mix:0; piano -> mix:1; mix -> out", slice: 256)
        clock.start(atSeconds: 0, rate: 1, anchorFrame: nil)
        for _ in 0..<8 { _ = g.render(frameCount: 256) }   // warm up

        var counts = RealTimeScaffold.Counts(), audible = 0
        var firstBad: Int?
        var now: Int64 = 8 * 256
        for i in 0..<3000 {
            // The control side, between renders (as a control thread would, concurrently).
            let ch = UInt8(i % 16)
            if i % 3 == 0 { piano.send(.noteOn(channel: ch, key: UInt8(36 + i % 60), velocity: 100)) }
            if i % 3 == 2 { piano.send(.noteOff(channel: UInt8((i - 2) % 16), key: UInt8(36 + (i - 2) % 60))) }
            if i % 5 == 0 { piano.send(.pitchBend(channel: ch, value: (i * 97) % 16384), at: now + Int64(i % 200)) }
            if i % 7 == 0 { piano.send(.controlChange(channel: ch, controller: 1, value: UInt8(i % 128)), at: now + 100) }
            if i % 11 == 0 { piano.send(.channelPressure(channel: ch, pressure: 64)); piano.send(.keyPressure(channel: ch, key: 60, pressure: 30)) }
            if i % 13 == 0 { gm.send(.programChange(channel: ch, program: UInt8(i % 128)), at: now + 3000) }
            if i == 1500 { piano.send(MIDIEvent(bytes: [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7])!) }
            switch i {
            case 400: clock.start(atSeconds: 5, rate: 1, anchorFrame: nil)
            case 700: clock.start(atSeconds: clock.position(sampleRate: 48000), rate: 1.5, anchorFrame: nil)
            case 900: tracks[1].isSilenced = true
            case 1000: clock.stop(atSeconds: clock.position(sampleRate: 48000))
            case 1200: clock.start(atSeconds: 2, rate: 1, anchorFrame: now + 1000)
            case 1600: try piano.setParameter("gain", -6, rampFrames: 4800)
            case 1800: try piano.setParameter("pan", -50)
            case 2000: try gm.setParameter("tuning", 35)
            default: break
            }
            let (r, c) = RealTimeScaffold.count { g.render(frameCount: 256) }
            now += 256
            if firstBad == nil && c.violation != nil { firstBad = i }
            counts += c
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertNil(counts.violation, "first at slice \(firstBad ?? -1)")
        XCTAssertGreaterThan(audible, 2900)
        XCTAssertEqual(gm.midiInput.droppedEventCount + piano.midiInput.droppedEventCount, 0)
    }

    /// A sampler playing audio-file zones (a looped mono zone and a stereo zone): 2000 slices of
    /// 256 frames, only the render calls tracked, while notes start and stop on many keys (both
    /// zones, several voices each, some at a given frame), with pitch bends and controllers.
    func testAudioFileZonesPlayingNotesAllocateNothingAndTakeNoLock() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ag-zones-rt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let tone = (0..<9600).map { 0.5 * sin(2 * Double.pi * 480 * Double($0) / 48000) }
        let mono = dir.appendingPathComponent("mono.wav"), stereo = dir.appendingPathComponent("stereo.wav")
        try WAVFile(sampleRate: 48000, sampleType: .int16, channels: [tone]).write(to: mono)
        try WAVFile(sampleRate: 44100, sampleType: .int16, channels: [tone, tone.map { -$0 }]).write(to: stereo)
        let sampler = try SamplerNode(id: "zones", sampleRate: 48000, properties: SamplerProperties(audioFiles: [mono.path, stereo.path]))
        let g = try startedGraph([sampler], "zones -> out", slice: 256)
        for _ in 0..<8 { _ = g.render(frameCount: 256) }
        var counts = RealTimeScaffold.Counts(), audible = 0
        var now: Int64 = 8 * 256
        for i in 0..<2000 {
            let ch = UInt8(i % 4), key = UInt8(40 + (i * 7) % 50)
            if i % 2 == 0 { sampler.send(.noteOn(channel: ch, key: key, velocity: UInt8(30 + i % 90)), at: now + Int64(i % 256)) }
            if i % 2 == 1 { sampler.send(.noteOff(channel: UInt8((i - 1) % 4), key: UInt8(40 + ((i - 1) * 7) % 50))) }
            if i % 5 == 0 { sampler.send(.pitchBend(channel: ch, value: (i * 97) % 16384)) }
            if i % 7 == 0 { sampler.send(.controlChange(channel: ch, controller: 7, value: UInt8(i % 128))) }
            let (r, c) = RealTimeScaffold.count { g.render(frameCount: 256) }
            now += 256
            counts += c
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertNil(counts.violation)
        XCTAssertGreaterThan(audible, 1900)
    }
}
