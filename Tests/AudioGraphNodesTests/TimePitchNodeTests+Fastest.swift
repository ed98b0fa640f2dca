// Tests of TimePitchNode's `fastest` mode (WSOLA, and its pitch shift): identity at rate 1, length and pitch, transients, slice independence, shifts.
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

    /// The frequency of `x`'s spectral peak by numpy (an independent reference): Hann window,
    /// FFT zero-padded to 2^22 points (0.011 Hz bins at 48 kHz).
    func numpyPeak(_ x: [Float]) throws -> Double {
        let code = """
        import sys, numpy as np
        x = np.frombuffer(sys.stdin.buffer.read(), dtype=np.float32).astype(np.float64)
        s = np.abs(np.fft.rfft(x * np.hanning(len(x)), 1 << 22))
        print(float(np.argmax(s) * float(sys.argv[1]) / (1 << 22)))
        """
        let text = try ReferenceScript.run(code: code, arguments: ["\(sr)"], input: x.withUnsafeBufferPointer { Data(buffer: $0) }).text
        return try XCTUnwrap(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), text)
    }

    /// The length bound of a shifted stretch: WSOLA runs at `rate / p` and its output plays `p`
    /// times as fast, so its placement bound (input frames at its own tempo) shrinks by `p`;
    /// at both ends, plus the 960 frames of the measuring windows.
    func shiftedLengthAccuracy(rate: Double, cents: Double) -> Double {
        let p = pow(2, cents / 1200)
        return 2 * wsolaPlacementBound(rate: rate / p) / p + 960
    }

    /// Through `fastest` at `rate` and `cents`: the 1 s burst's audible length is 1 s / rate
    /// within ``shiftedLengthAccuracy(rate:cents:)``, and a steady 440 Hz sine's spectral peak
    /// (numpy, over 1 s from 0.2 s) is within `maximumCents` of 440 · 2^(cents/1200) — SoX's
    /// `pitch` (WSOLA, then a resampling by the pitch ratio). Returns the error in cents.
    @discardableResult
    func checkFastestShift(rate: Double, cents: Double, maximumCents: Double,
                           file: StaticString = #filePath, line: UInt = #line) throws -> Double {
        let t = try fastest(rate: rate)
        try t.setParameter("pitch", cents)
        let expected = Double(burstFrames) / rate
        let y = try render(t, frames: Int(expected) + 24000)
        XCTAssertEqual(Double(audibleLength(y)), expected, accuracy: shiftedLengthAccuracy(rate: rate, cents: cents),
                       "rate \(rate), \(cents) cents: audible frames", file: file, line: line)
        let sine = formulaSource("sine", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000)) }
        let u = try fastest(rate: rate)
        try u.setParameter("pitch", cents)
        let z = renderFrames(try startedGraph([sine, u], "sine -> tp -> out"), frames: 57600, channels: 1)[0]
        let f = try numpyPeak(Array(z[9600..<57600]))
        let error = self.cents(f, from: 440 * pow(2, cents / 1200))
        XCTAssertEqual(error, 0, accuracy: maximumCents, "rate \(rate), \(cents) cents: \(f) Hz", file: file, line: line)
        XCTAssertEqual(toneFit(Array(z[9600..<57600]), frequency: 440 * pow(2, cents / 1200), sampleRate: sr).amplitude, 0.5,
                       accuracy: 0.05, "rate \(rate), \(cents) cents: the tone's level", file: file, line: line)
        return error
    }

    /// Rate 1, +700 and -1200 cents: the length kept, the frequency within 1 cent of
    /// 440 · 2^(cents/1200). (Before: the pitch was refused at initialize.)
    func testFastestShiftsThePitchAndKeepsTheLength() throws {
        for cents in [700.0, -1200] {
            let error = try checkFastestShift(rate: 1, cents: cents, maximumCents: 1)
            print("fastest, rate 1, \(cents) cents: \(error) cents off")
        }
    }

    /// Rate 1.25 and +300 cents together: 1 s / 1.25 long, 440 · 2^(3/12) = 523.25 Hz within 1 cent.
    func testFastestShiftsThePitchAtAnotherRate() throws {
        let error = try checkFastestShift(rate: 1.25, cents: 300, maximumCents: 1)
        print("fastest, rate 1.25, +300 cents: \(error) cents off")
    }

    /// The extremes: ±2400 cents (a ratio of 4 either way) at rates 1/32 and 32 render, stay
    /// finite and audible, without a trap; +2400 at rate 1 is 1760 Hz.
    func testFastestAtTheExtremeRatios() throws {
        for (rate, cents) in [(1.0 / 32, 2400.0), (1.0 / 32, -2400), (32, 2400), (32, -2400), (1, 2400)] {
            let sine = formulaSource("sine", channels: 2) { _, n in Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000)) }
            let u = try fastest(rate: rate)
            try u.setParameter("pitch", cents)
            let z = renderFrames(try startedGraph([sine, u], "sine -> tp -> out", slice: 100), frames: 24000, channels: 2)
            XCTAssertTrue(z[0].allSatisfy(\.isFinite), "rate \(rate), \(cents) cents")
            XCTAssertGreaterThan(SignalMeasurement.rms(z[0][4800...]), 0.2, "rate \(rate), \(cents) cents")
            XCTAssertEqual(z[0], z[1], "rate \(rate), \(cents) cents: both channels alike")
            if rate == 1 {
                XCTAssertEqual(SignalMeasurement.estimateFrequency(z[0][4800...], sampleRate: sr) ?? 0, 1760, accuracy: 2)
            }
        }
    }

    /// Slices of 512, 64, 100 and an irregular pattern give the same samples with pitch
    /// automation (0 up to +700 cents, then down to -500) and a rate set between renders; the
    /// shift follows the automation (the tone at 0.9 s is 440 · 2^(700/1200), at the end
    /// 440 · 2^(-500/1200)).
    func testFastestPitchIsSliceSizeIndependentWithAutomationAndChanges() throws {
        func render(slice: Int, pattern: [Int]) throws -> [Float] {
            let sine = formulaSource("sine", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000)) }
            let t = try fastest(rate: 1)
            try t.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 0, time: 0.1), .linearRamp(value: 700, time: 0.5), .setValue(value: 700, time: 1),
                .linearRamp(value: -500, time: 1.2)], defaultValue: 0), for: "pitch")
            let g = try startedGraph([sine, t], "sine -> tp -> out", slice: slice)
            var y = renderFrames(g, frames: 64000, channels: 1, slices: pattern)[0]
            try t.setParameter("rate", 1.5)
            y += renderFrames(g, frames: 25600, channels: 1, slices: pattern)[0]
            return y
        }
        let a = try render(slice: 512, pattern: [512])
        XCTAssertEqual(SignalMeasurement.estimateFrequency(a[38400..<47000], sampleRate: sr) ?? 0, 440 * pow(2, 700.0 / 1200), accuracy: 1)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(a[76800...], sampleRate: sr) ?? 0, 440 * pow(2, -500.0 / 1200), accuracy: 1)
        XCTAssertEqual(a, try render(slice: 64, pattern: [64]))
        XCTAssertEqual(a, try render(slice: 100, pattern: [100]))
        XCTAssertEqual(a, try render(slice: 512, pattern: [1, 511, 100, 37]))
    }

    /// A pitch set while it plays takes effect at the next block of 256 output frames: with
    /// slices of 100 frames the tone is 440 Hz up to the change and 440 · 2^(700/1200) from at
    /// most 3 slices after it (the join is continuous: no sample steps by more than the tone's
    /// own largest step plus 0.05). (Before: the pitch set while playing was ignored.)
    func testFastestFollowsAPitchSetWhilePlaying() throws {
        let sine = formulaSource("sine", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000)) }
        let v = try fastest(rate: 1)
        let g = try startedGraph([sine, v], "sine -> tp -> out", slice: 100)
        let before = renderFrames(g, frames: 9650, channels: 1, slices: [100])[0]
        try v.setParameter("pitch", 700)
        let after = renderFrames(g, frames: 9600, channels: 1, slices: [100])[0]
        XCTAssertEqual(SignalMeasurement.estimateFrequency(before[4800...], sampleRate: sr) ?? 0, 440, accuracy: 0.5)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(after[300...], sampleRate: sr) ?? 0, 440 * pow(2, 700.0 / 1200), accuracy: 1)
        let y = before + after
        let largestStep = 2 * Double.pi * 440 * pow(2, 700.0 / 1200) / sr * 0.5
        var worst = 0.0
        for i in 1..<y.count { worst = max(worst, abs(Double(y[i]) - Double(y[i - 1]))) }
        XCTAssertLessThan(worst, largestStep + 0.05, "a click at the join")
    }
}
