// Tests of TimePitchNode's `fastest` mode (WSOLA): identity at rate 1, length and pitch, transients, slice independence, pitch refused.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

extension TimePitchNodeTests {
    /// Seeded white noise in -0.5...0.5 (a linear congruential generator: the same on every run).
    func noiseSource(_ id: String = "tone", channels: Int = 1) -> RenderCallbackNode {
        formulaSource(id, channels: channels) { c, n in
            var x = UInt64(n) &* 6_364_136_223_846_793_005 &+ UInt64(c + 1) &* 1_442_695_040_888_963_407
            x ^= x >> 33; x &*= 0xff51_afd7_ed55_8ccd; x ^= x >> 33
            return Float(Double(x >> 11) / Double(1 << 53)) - 0.5
        }
    }

    func fastest(rate: Double) throws -> TimePitchNode {
        let t = TimePitchNode(id: "tp", sampleRate: sr, quality: .fastest)
        try t.setParameter("rate", rate)
        return t
    }

    /// At rate 1 each segment's best start is its nominal one (the previous segment's end is
    /// exactly the input there, difference 0), so the output is the input, sample for sample.
    func testFastestAtRateOneIsTheInputExactly() throws {
        let g = try startedGraph([noiseSource(channels: 2), try fastest(rate: 1)], "tone -> tp -> out", slice: 100)
        let y = renderFrames(g, frames: 48000, channels: 2)
        let x = renderFrames(try startedGraph([noiseSource(channels: 2)], "tone -> out", slice: 100), frames: 48000, channels: 2)
        XCTAssertEqual(y[0], x[0])
        XCTAssertEqual(y[1], x[1])
    }

    /// How far (frames) WSOLA may put an input event from `input time / rate`: within a segment
    /// the input plays at rate 1, so an event `u` frames into its segment lands
    /// `|u - segment/2|·|1 - 1/rate|` off, plus the segment's own offset from its nominal place
    /// (at most ``WSOLAStretcher/search``).
    func wsolaPlacementBound(rate: Double) -> Double {
        let w = WSOLAStretcher(sampleRate: sr, channelCount: 1, maximumOutputPerRead: 512, maximumFeed: 256)
        return Double(w.segment / 2) * abs(1 - 1 / rate) + Double(w.search)
    }

    /// The burst's audible length within the placement bound at each end plus the 960 frames of
    /// the measuring windows, and a steady 440 Hz sine's spectral peak within 1 cent (WSOLA
    /// splices the input's own waveform: the pitch is exact) at rates 0.5, 1.25 and 2.
    func testFastestKeepsLengthAndPitchWithinOneCent() throws {
        for rate in [0.5, 1.25, 2] {
            try checkLengthAndPitch(.fastest, rate: rate, maximumCents: 1, lengthAccuracy: 2 * wsolaPlacementBound(rate: rate) + 960)
        }
    }

    /// A click train (a 2 ms burst every 0.25 s, rate 1.25): each click that comes out lies
    /// within the placement bound plus its own length (8 + 8 + 2 ms) of where it belongs (input
    /// time / 1.25), and at least two thirds of them come out. WSOLA skips input in pieces at
    /// rates above 1, and its similarity measure (the squared difference over the cross-fade)
    /// steers a segment's start past a click that follows silence: 13 of 18 come out here; SoX's
    /// `tempo` keeps 7 of 9 in scripts/timestretch-quality.py (Docs/Performance.md).
    func testFastestPlacesTransientsWithinTheSearchRange() throws {
        let period = 12000, clickFrames = 96
        let src = formulaSource("clicks", channels: 1) { _, n in
            let k = Int(n) % period
            return Int(n) >= period && k < clickFrames ? Float(0.5 * exp(-Double(k) / 20) * (k % 2 == 0 ? 1 : -1)) : 0
        }
        let g = try startedGraph([src, try fastest(rate: 1.25)], "clicks -> tp -> out", slice: 512)
        let y = renderFrames(g, frames: 48000 * 4, channels: 1)[0]
        var found = 0, total = 0, worst = 0.0
        for c in stride(from: period, to: Int(Double(y.count) * 1.25) - period, by: period) {
            total += 1
            let centre = Int((Double(c) / 1.25).rounded()), half = 2880
            let w = (centre - half..<centre + half).map { Double(y[$0]) * Double(y[$0]) }
            let energy = w.reduce(0, +)
            guard energy > 0.25 * 0.5 else { continue }   // the click holds about 0.5 * 0.25 * 10
            found += 1
            let centroid = zip(w.indices, w).reduce(0.0) { $0 + Double($1.0) * $1.1 } / energy + Double(centre - half)
            worst = max(worst, abs(centroid - Double(centre) - 10) / sr * 1000)
        }
        XCTAssertLessThanOrEqual(worst, (wsolaPlacementBound(rate: 1.25) + Double(clickFrames)) / sr * 1000, "ms")
        XCTAssertGreaterThanOrEqual(found * 3, total * 2, "\(found) of \(total) clicks")
    }

    /// Slices of 512, 64, 100 and an irregular pattern give the same samples, with rate
    /// automation (1.5 down to 0.75) and a rate set between renders.
    func testFastestIsSliceSizeIndependentWithAutomationAndChanges() throws {
        func render(slice: Int, pattern: [Int]) throws -> [Float] {
            let t = try fastest(rate: 1.5)
            try t.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 1.5, time: 0), .linearRamp(value: 0.75, time: 0.4)], defaultValue: 1.5), for: "rate")
            let g = try startedGraph([noiseSource(), t], "tone -> tp -> out", slice: slice)
            var y = renderFrames(g, frames: 12800, channels: 1, slices: pattern)[0]
            try t.setParameter("rate", 3)
            y += renderFrames(g, frames: 25600, channels: 1, slices: pattern)[0]
            return y
        }
        let a = try render(slice: 512, pattern: [512])
        XCTAssertGreaterThan(SignalMeasurement.rms(a), 0.2)
        XCTAssertEqual(a, try render(slice: 64, pattern: [64]))
        XCTAssertEqual(a, try render(slice: 100, pattern: [100]))
        XCTAssertEqual(a, try render(slice: 512, pattern: [1, 511, 100, 37]))
    }

    /// Stereo: each channel keeps its own tone (300 and 1000 Hz) at rate 0.8.
    func testFastestStereoKeepsEachChannel() throws {
        let src = formulaSource("st", channels: 2) { c, n in
            Float(0.4 * sin(2 * Double.pi * (c == 0 ? 300 : 1000) * Double(n) / 48000))
        }
        let g = try startedGraph([src, try fastest(rate: 0.8)], "st -> tp -> out")
        let y = renderFrames(g, frames: 24000, channels: 2)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y[0][4800..<24000], sampleRate: sr) ?? 0, 300, accuracy: 0.5)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y[1][4800..<24000], sampleRate: sr) ?? 0, 1000, accuracy: 1)
    }

    /// WSOLA cannot shift the pitch: a pitch other than 0, or pitch automation, is refused at
    /// initialize with one line naming the node and the mode; a pitch set while it plays is ignored.
    func testFastestRefusesAPitchShift() throws {
        let t = try fastest(rate: 1.25)
        try t.setParameter("pitch", 100)
        XCTAssertThrowsError(try startedGraph([burst(), t], "tone -> tp -> out")) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("\"tp\"") && message.contains("fastest") && message.contains("pitch"), message)
            XCTAssertFalse(message.contains("\n"), message)
        }
        let u = try fastest(rate: 1.25)
        try u.setAutomation(try AutomationTimeline(events: [.setValue(value: 0, time: 0), .linearRamp(value: 300, time: 0.5)],
                                                   defaultValue: 0), for: "pitch")
        XCTAssertThrowsError(try startedGraph([burst(), u], "tone -> tp -> out"))
        let v = try fastest(rate: 1)
        let g = try startedGraph([noiseSource(), v], "tone -> tp -> out")
        let before = renderFrames(g, frames: 4800, channels: 1)[0]
        try v.setParameter("pitch", 700)
        let after = renderFrames(g, frames: 4800, channels: 1)[0]
        let x = renderFrames(try startedGraph([noiseSource()], "tone -> out"), frames: 9600, channels: 1)[0]
        XCTAssertEqual(before + after, x, "rate 1, the pitch ignored: the input")
    }
}
