// Tests of MIDI into LV2 instruments through their atom ports: synthv1 plays a note at its frequency from its exact frame.
import AudioGraphCore
import AudioGraphRealtime
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphPlugins

final class LV2AtomBuffersTests: XCTestCase {
    static let synthv1 = "http://synthv1.sourceforge.net/lv2"

    /// The frequency in `range` whose DFT magnitude over `x` is largest (0.5 Hz grid, then
    /// golden-section search to 1e-4 Hz).
    func dominantFrequency(_ x: [Float], in range: ClosedRange<Double>, sampleRate: Double) -> Double {
        func magnitude(_ f: Double) -> Double {
            var re = 0.0, im = 0.0
            for (n, y) in x.enumerated() {
                let w = 2 * Double.pi * f * Double(n) / sampleRate
                re += Double(y) * cos(w)
                im -= Double(y) * sin(w)
            }
            return re * re + im * im
        }
        var best = range.lowerBound, bestMagnitude = 0.0
        for f in stride(from: range.lowerBound, through: range.upperBound, by: 0.5) {
            let m = magnitude(f)
            if m > bestMagnitude { best = f; bestMagnitude = m }
        }
        var a = best - 0.5, b = best + 0.5
        let r = (sqrt(5.0) - 1) / 2
        while b - a > 1e-4 {
            let c = b - r * (b - a), d = a + r * (b - a)
            if magnitude(c) > magnitude(d) { b = d } else { a = c }
        }
        return (a + b) / 2
    }

    /// synthv1 with its oscillators' detune and its LFOs off (both layers) (key 69) at frame 10007 of a render in 4096-frame
    /// slices and A5 at 40007 through its MIDI atom port: silent before 10007, sounding from
    /// within two frames of it, fundamentals at 440 and 880 Hz within 1 cent.
    func testSynthv1PlaysNotesAtTheirFrequenciesFromTheirFrames() throws {
        let node = try LV2Node(id: "syn", uri: Self.synthv1)
        XCTAssertTrue(node.takesMIDI)
        for p in ["DCO1_DETUNE", "DCO2_DETUNE", "LFO1_ENABLED", "LFO2_ENABLED"] { try node.setParameter(p, 0) }
        let g = try startedChain([node], ["syn"], slice: 4096)
        XCTAssertTrue(node.send(.noteOn(channel: 0, key: 69, velocity: 100), at: 10_007))
        XCTAssertTrue(node.send(.noteOff(channel: 0, key: 69), at: 34_007))
        XCTAssertTrue(node.send(.noteOn(channel: 0, key: 81, velocity: 100), at: 40_007))
        let out = renderFrames(g, frames: 64_000, channels: 2)
        let first = try XCTUnwrap(out[0].firstIndex { $0 != 0 })
        print("synthv1: first non-zero sample at frame \(first) (note on at 10007)")
        XCTAssertGreaterThanOrEqual(first, 10_007)
        XCTAssertLessThanOrEqual(first, 10_009)
        let a4 = dominantFrequency(Array(out[0][14_000..<33_200]), in: 400...480, sampleRate: 48000)
        let a5 = dominantFrequency(Array(out[0][44_000..<63_200]), in: 840...920, sampleRate: 48000)
        print("synthv1: A4 \(a4) Hz (\(1200 * log2(a4 / 440)) cents), A5 \(a5) Hz (\(1200 * log2(a5 / 880)) cents)")
        XCTAssertEqual(1200 * log2(a4 / 440), 0, accuracy: 1)
        XCTAssertEqual(1200 * log2(a5 / 880), 0, accuracy: 1)
        XCTAssertEqual(node.midiInput.droppedEventCount, 0)
    }

    /// Without MIDI (the port empty, as before this host fed it) synthv1 stays silent.
    func testSynthv1IsSilentWithoutNotes() throws {
        let node = try LV2Node(id: "syn", uri: Self.synthv1)
        let g = try startedChain([node], ["syn"], slice: 1024)
        XCTAssertEqual(SignalMeasurement.peak(renderFrames(g, frames: 20_000, channels: 2)[0]), 0)
    }

    /// synthv1 fed notes, controllers and pitch bends (timed and untimed) and a two-track
    /// sequence for 1500 slices of 256 frames: the host's MIDI path (queue, collector, atom
    /// sequences) and synthv1's run allocate nothing and take no lock on the render thread.
    func testMIDIIntoSynthv1AllocatesNothingAndTakesNoLock() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        let node = try LV2Node(id: "syn", uri: Self.synthv1)
        let clock = MIDIPlaybackClock()
        var tracks: [MIDITrackSchedule] = []
        for t in 0..<2 {
            var times: [Double] = [], events: [MIDIEvent] = []
            for i in 0..<200 {
                let key = UInt8(48 + (i * 5 + t * 7) % 30), at = Double(i) * 0.04 + Double(t) * 0.01
                times += [at, at + 0.02]
                events += [.noteOn(channel: 0, key: key, velocity: 90), .noteOff(channel: 0, key: key)]
            }
            tracks.append(MIDITrackSchedule(clock: clock, times: times, events: events))
        }
        try node.setProperty(MIDISequenceSources.propertyName, MIDISequenceSources(tracks: tracks))
        let g = try startedChain([node], ["syn"], slice: 256)
        clock.start(atSeconds: 0, rate: 1, anchorFrame: nil)
        for _ in 0..<8 { _ = g.render(frameCount: 256) }
        var counts = RealTimeScaffold.Counts(), audible = 0
        var now: Int64 = 8 * 256
        for i in 0..<1500 {
            if i % 4 == 0 { node.send(.noteOn(channel: 0, key: UInt8(60 + i % 24), velocity: 100), at: now + Int64(i % 256)) }
            if i % 4 == 2 { node.send(.noteOff(channel: 0, key: UInt8(60 + (i - 2) % 24))) }
            if i % 9 == 0 { node.send(.pitchBend(channel: 0, value: (i * 131) % 16384), at: now + 17) }
            if i % 11 == 0 { node.send(.controlChange(channel: 0, controller: 1, value: UInt8(i % 128))) }
            if i == 700 { clock.stop(atSeconds: clock.position(sampleRate: 48000)) }
            if i == 900 { clock.start(atSeconds: 1, rate: 1.25, anchorFrame: nil) }
            let (r, c) = RealTimeScaffold.count { g.render(frameCount: 256) }
            now += 256
            counts += c
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertNil(counts.violation)
        XCTAssertGreaterThan(audible, 1000)
    }
}
