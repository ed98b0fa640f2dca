// Tests of TimePitchNode rendered offline: lengths and frequencies of tone bursts, alignment, bypass, slice independence.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class TimePitchNodeTests: XCTestCase {
    let sr = 48000.0
    /// The burst: 440 Hz at amplitude 0.5 for one second, then silence.
    let toneFrequency = 440.0
    let burstFrames = 48000

    func burst(_ id: String = "tone", channels: Int = 1) -> RenderCallbackNode {
        let f = toneFrequency, frames = Int64(burstFrames), rate = sr
        return formulaSource(id, channels: channels) { _, n in
            n < frames ? Float(0.5 * sin(2 * Double.pi * f * Double(n) / rate)) : 0
        }
    }

    func timePitch(rate: Double = 1, pitch: Double = 0, bypass: Bool = false) throws -> TimePitchNode {
        let t = TimePitchNode(id: "tp", sampleRate: sr)
        try t.setParameter("rate", rate)
        try t.setParameter("pitch", pitch)
        try t.setParameter("bypass", bypass ? 1 : 0)
        return t
    }

    /// Frames from the first to the last 10 ms window whose RMS is above half the burst's
    /// (0.5/sqrt 2 / 2): the audible length of the rendered burst.
    func audibleLength(_ y: [Float]) -> Int {
        let w = 480
        let threshold = 0.5 / 2.squareRoot() / 2
        var first = -1, last = -1
        for k in 0..<(y.count / w) where SignalMeasurement.rms(y[(k * w)..<((k + 1) * w)]) > threshold {
            if first < 0 { first = k }
            last = k
        }
        return first < 0 ? 0 : (last - first + 1) * w
    }

    func render(_ t: TimePitchNode, frames: Int, slice: Int = 512, pattern: [Int]? = nil) throws -> [Float] {
        let g = try startedGraph([burst(), t], "tone -> tp -> out", slice: slice)
        return renderFrames(g, frames: frames, channels: 1, slices: pattern)[0]
    }

    func testDefaultsAreTheSpecs() {
        let t = TimePitchNode(id: "t", sampleRate: sr)
        XCTAssertEqual(t.parameter("rate")?.value, 1)
        XCTAssertEqual(t.parameter("pitch")?.value, 0)
        XCTAssertEqual(t.parameter("overlap")?.value, 8)
        XCTAssertEqual(t.parameter("bypass")?.value, 0)
        XCTAssertEqual(t.parameter("rate")?.info.minValue, 1.0 / 32)
        XCTAssertEqual(t.parameter("rate")?.info.maxValue, 32)
        XCTAssertEqual(t.parameter("pitch")?.info.minValue, -2400)
        XCTAssertEqual(t.parameter("pitch")?.info.maxValue, 2400)
    }

    func testRateTwoHalvesTheLengthAndKeepsTheFrequency() throws {
        let y = try render(try timePitch(rate: 2), frames: 48000)
        let length = audibleLength(y)
        XCTAssertEqual(Double(length), 24000, accuracy: 960, "audible frames at rate 2")
        let f = SignalMeasurement.estimateFrequency(y[4800..<19200], sampleRate: sr)
        XCTAssertEqual(f ?? 0, toneFrequency, accuracy: 0.5)
        XCTAssertEqual(toneFit(Array(y[4800..<19200]), frequency: toneFrequency, sampleRate: sr).amplitude, 0.5, accuracy: 0.05)
    }

    func testRateHalfDoublesTheLengthAndKeepsTheFrequency() throws {
        let y = try render(try timePitch(rate: 0.5), frames: 120_000)
        XCTAssertEqual(Double(audibleLength(y)), 96000, accuracy: 960, "audible frames at rate 0.5")
        let f = SignalMeasurement.estimateFrequency(y[9600..<86400], sampleRate: sr)
        XCTAssertEqual(f ?? 0, toneFrequency, accuracy: 0.5)
    }

    func testAnOctaveUpDoublesTheFrequencyAndKeepsTheLength() throws {
        let y = try render(try timePitch(pitch: 1200), frames: 72000)
        XCTAssertEqual(Double(audibleLength(y)), 48000, accuracy: 960, "audible frames at +1200 cents")
        let f = SignalMeasurement.estimateFrequency(y[4800..<43200], sampleRate: sr)
        XCTAssertEqual(f ?? 0, 2 * toneFrequency, accuracy: 1)
        XCTAssertEqual(toneFit(Array(y[4800..<43200]), frequency: 2 * toneFrequency, sampleRate: sr).amplitude, 0.5, accuracy: 0.05)
    }

    func testAtRateOneTheOutputIsAlignedWithTheInput() throws {
        // Rubberband's start delay is discarded: a chirp (no period to confuse the lag) comes
        // out where it went in.
        let chirp: @Sendable (Int64) -> Double = { n in
            let t = Double(n) / 48000
            return 0.5 * sin(2 * Double.pi * (200 * t + 400 * t * t))
        }
        let src = formulaSource("chirp", channels: 1) { _, n in Float(chirp(n)) }
        let t = try timePitch()
        let g = try startedGraph([src, t], "chirp -> tp -> out")
        let y = renderFrames(g, frames: 24000, channels: 1)[0]
        let x = (2000..<8000).map { chirp(Int64($0)) }
        let lag = SignalMeasurement.bestLag(of: x, in: y[1000..<10000].map { Double($0) }, maxLag: 3000)
        XCTAssertEqual(Double(lag ?? -9999), 1000, accuracy: 4, "the chirp comes out at the frame it went in")
        XCTAssertGreaterThan(t.latencyFrames, 0, "rubberband's start delay, read ahead")
    }

    func testBypassPassesTheInputExactlyOnItsTimeline() throws {
        let y = try render(try timePitch(rate: 2, pitch: 700, bypass: true), frames: 4096, slice: 100)
        for n in 0..<4096 {
            let x = Float(0.5 * sin(2 * Double.pi * toneFrequency * Double(n) / sr))
            if y[n] != x { XCTFail("frame \(n): \(y[n]) != \(x)"); return }
        }
    }

    func testSliceSizesGiveIdenticalOutputWithAutomationAndChanges() throws {
        func render(slice: Int, pattern: [Int]) throws -> [Float] {
            let t = try timePitch(rate: 1.5, pitch: -200)
            try t.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 1.5, time: 0), .linearRamp(value: 0.75, time: 0.4)], defaultValue: 1.5), for: "rate")
            let g = try startedGraph([burst(), t], "tone -> tp -> out", slice: slice)
            var y = renderFrames(g, frames: 12800, channels: 1, slices: pattern)[0]
            try t.setParameter("pitch", 300)
            y += renderFrames(g, frames: 25600, channels: 1, slices: pattern)[0]
            return y
        }
        let a = try render(slice: 512, pattern: [512])
        XCTAssertGreaterThan(SignalMeasurement.rms(a), 0.1)
        XCTAssertEqual(a, try render(slice: 64, pattern: [64]))
        XCTAssertEqual(a, try render(slice: 100, pattern: [100]))
        XCTAssertEqual(a, try render(slice: 512, pattern: [1, 511, 100, 37]))
    }

    /// Review item 17: bypass automated on and off inside slices (frames 2400 and 7200) takes
    /// effect at the 256-frame output block boundaries, so slices of 64, 100, 512 and an
    /// irregular pattern give the same output (before: read per slice, they differed).
    func testBypassAutomationIsSliceSizeIndependent() throws {
        func render(slice: Int, pattern: [Int]) throws -> [Float] {
            let t = try timePitch(rate: 1.25, pitch: 200)
            try t.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 0, time: 0), .setValue(value: 1, time: 0.05), .setValue(value: 0, time: 0.15)],
                defaultValue: 0), for: "bypass")
            let g = try startedGraph([burst(), t], "tone -> tp -> out", slice: slice)
            return renderFrames(g, frames: 19200, channels: 1, slices: pattern)[0]
        }
        let a = try render(slice: 512, pattern: [512])
        XCTAssertGreaterThan(SignalMeasurement.rms(a), 0.1)
        XCTAssertEqual(a, try render(slice: 64, pattern: [64]))
        XCTAssertEqual(a, try render(slice: 100, pattern: [100]))
        XCTAssertEqual(a, try render(slice: 512, pattern: [1, 511, 100, 37]))
    }

    func testStereoKeepsEachChannel() throws {
        let src = formulaSource("st", channels: 2) { c, n in
            Float(0.4 * sin(2 * Double.pi * (c == 0 ? 300 : 1000) * Double(n) / 48000))
        }
        let t = try timePitch(rate: 1.25, pitch: 1200)
        let g = try startedGraph([src, t], "st -> tp -> out")
        let y = renderFrames(g, frames: 24000, channels: 2)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y[0][4800..<24000], sampleRate: sr) ?? 0, 600, accuracy: 1)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y[1][4800..<24000], sampleRate: sr) ?? 0, 2000, accuracy: 2)
    }

    func testTheOverlapChoosesRubberbandsWindow() {
        XCTAssertEqual(TimePitchStretcher.windowOption(overlap: 3).rawValue, 0x0010_0000)
        XCTAssertEqual(TimePitchStretcher.windowOption(overlap: 5.9).rawValue, 0x0010_0000)
        XCTAssertEqual(TimePitchStretcher.windowOption(overlap: 6).rawValue, 0)
        XCTAssertEqual(TimePitchStretcher.windowOption(overlap: 32).rawValue, 0)
    }

    // MARK: Non-finite input (issue 22)

    /// rubberband never receives NaN or infinity: they are silenced on the way in. Before, the
    /// output was NaN from the first bad block on and librubberband printed thousands of
    /// warnings. Now the output is finite throughout and the tone plays on at its level.
    func testNonFiniteInputIsSilencedBeforeRubberband() throws {
        let t = try timePitch(rate: 1.5, pitch: 300)
        let src = formulaSource("tone", channels: 1) { _, n in
            if n % 997 == 5 { return .nan }
            if n % 1499 == 7 { return .infinity }
            return Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000))
        }
        let g = try startedGraph([src, t], "tone -> tp -> out", slice: 512)
        let y = renderFrames(g, frames: 24000, channels: 1)[0]
        XCTAssertTrue(y.allSatisfy(\.isFinite))
        XCTAssertGreaterThan(SignalMeasurement.rms(y[12000...]), 0.2)
    }
}
