// Tests of DelayNode rendered offline against the spec's delay recurrence written here.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class DelayNodeTests: XCTestCase {
    let sr = 48000.0

    /// d[n] = x(n-D) + fb*d(n-D), y = (1-w)x + w d (integer D, zero before the start).
    func reference(_ x: [Double], _ D: Int, _ fb: Double, _ w: Double) -> [Double] {
        var d = [Double](repeating: 0, count: x.count)
        var y = [Double](repeating: 0, count: x.count)
        for n in x.indices {
            d[n] = (n >= D ? x[n - D] : 0) + fb * (n >= D ? d[n - D] : 0)
            y[n] = (1 - w) * x[n] + w * d[n]
        }
        return y
    }

    func delay(_ time: Double, _ feedback: Double, _ cutoff: Double, _ wet: Double) throws -> DelayNode {
        let d = DelayNode(id: "echo", sampleRate: sr)
        try d.setParameter("delayTime", time)
        try d.setParameter("feedback", feedback)
        try d.setParameter("lowPassCutoff", cutoff)
        try d.setParameter("wetDryMix", wet)
        return d
    }

    func testDefaultsAreTheSpecs() {
        let d = DelayNode(id: "d", sampleRate: sr)
        XCTAssertEqual(d.parameter("delayTime")?.value, 1)
        XCTAssertEqual(d.parameter("feedback")?.value, 50)
        XCTAssertEqual(d.parameter("lowPassCutoff")?.value, 15000)
        XCTAssertEqual(d.parameter("wetDryMix")?.value, 100)
    }

    func testWetDryMixOnASine() throws {
        // The conformance case: 500 Hz, D = 120 frames, feedback 25 %, wet 40 %.
        let src = formulaSource("tone", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 500 * Double(n) / 48000)) }
        let g = try startedGraph([src, try delay(0.0025, 25, 24000, 40)], "tone -> echo -> out")
        let y = renderFrames(g, frames: 24000, channels: 1)[0]
        let x = (0..<24000).map { Double(Float(0.5 * sin(2 * Double.pi * 500 * Double($0) / 48000))) }
        let ref = reference(x, 120, 0.25, 0.4)
        let e = SignalMeasurement.worstError(y) { ref[$0] }
        XCTAssertLessThan(e.error, 1e-6, "at frame \(e.at)")
    }

    func testImpulseEchoesWithFeedbackOnTwoChannels() throws {
        let src = formulaSource("imp", channels: 2) { c, n in n == 5 ? (c == 0 ? 1 : -0.5) : 0 }
        let g = try startedGraph([src, try delay(0.01, -50, 24000, 100)], "imp -> echo -> out", slice: 256)
        let y = renderFrames(g, frames: 4000, channels: 2)
        for k in 1..<8 {
            XCTAssertEqual(Double(y[0][5 + 480 * k]), pow(-0.5, Double(k - 1)), accuracy: 1e-7)
            XCTAssertEqual(Double(y[1][5 + 480 * k]), -0.5 * pow(-0.5, Double(k - 1)), accuracy: 1e-7)
        }
        let nonzero = y[0].indices.filter { y[0][$0] != 0 }
        XCTAssertEqual(nonzero, (1..<9).map { 5 + 480 * $0 })
    }

    func testSliceIndependentWithChangesAndAutomation() throws {
        func render(slice: Int, pattern: [Int]) throws -> [[Float]] {
            let d = try delay(0.0173, 60, 3000, 70)
            try d.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 70, time: 0), .linearRamp(value: 20, time: 0.15)], defaultValue: 70), for: "wetDryMix")
            let src = formulaSource("src", channels: 2) { c, n in
                Float(0.4 * sin(2 * Double.pi * (c == 0 ? 330 : 770) * Double(n) / 48000))
            }
            let g = try startedGraph([src, d], "src -> echo -> out", slice: slice)
            var y = renderFrames(g, frames: 4096, channels: 2, slices: pattern)
            try d.setParameter("delayTime", 0.031)
            try d.setParameter("lowPassCutoff", 900)
            let rest = renderFrames(g, frames: 8192, channels: 2, slices: pattern)
            for c in 0..<2 { y[c] += rest[c] }
            return y
        }
        let a = try render(slice: 512, pattern: [512])
        XCTAssertEqual(a, try render(slice: 4096, pattern: [4096]))
        XCTAssertEqual(a, try render(slice: 64, pattern: [1, 64, 9, 30]))
    }

    // MARK: Non-finite input (issue 22)

    /// A 1 kHz tone with NaN at frames 100...112 and +-infinity at 200 and 201, as a source.
    static func poisoned(_ c: Int, _ n: Int64) -> Float {
        if (100...112).contains(n) { return .nan }
        if n == 200 { return .infinity }
        if n == 201 { return -.infinity }
        return Float(0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000))
    }

    /// One NaN used to stay for the rest of the file, even with feedback 0 (0 * NaN is NaN). Now
    /// the bad samples written into the line's memory become 0 after their slice: every later
    /// frame is exactly the delayed input with those samples silenced, for feedback 0 and 60 %.
    func testNonFiniteInputLeavesNoTraceAfterItsSlice() throws {
        for feedback in [0.0, 60.0] {
            let src = formulaSource("src", channels: 2) { c, n in Self.poisoned(c, n) }
            let g = try startedGraph([src, try delay(0.01, feedback, 24000, 100)], "src -> echo -> out", slice: 256)
            let y = renderFrames(g, frames: 9600, channels: 2)
            let x = (0..<9600).map { n -> Double in
                let v = Self.poisoned(0, Int64(n))
                return v.isFinite ? Double(v) : 0
            }
            let ref = reference(x, 480, feedback / 100, 1)
            for c in 0..<2 {
                XCTAssertTrue(y[c][256...].allSatisfy(\.isFinite), "feedback \(feedback) channel \(c)")
                let e = SignalMeasurement.worstError(y[c], 256..<9600) { ref[$0] }
                XCTAssertLessThan(e.error, 1e-6, "feedback \(feedback) channel \(c) at frame \(e.at)")
            }
        }
    }

    /// `smoothing: false` (Web Audio's DelayNode): a delayTime step read at the new delay from
    /// the step's frame, exactly the recurrence; the default still crossfades over 10 ms there.
    func testWithoutSmoothingADelayStepIsExact() throws {
        let x = (0..<9600).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 48000)) }
        func render(smoothing: Bool) throws -> [Float] {
            let d = DelayNode(id: "echo", sampleRate: sr, options: .init(smoothing: smoothing))
            try d.setParameter("feedback", 0)
            try d.setParameter("wetDryMix", 100)
            try d.setAutomation(try AutomationTimeline(events: [.setValue(value: 1.0 / 128, time: 0), .setValue(value: 1.0 / 64, time: 0.1)],
                                                       defaultValue: 1.0 / 128), for: "delayTime")
            let g = try startedGraph([formulaSource("src", channels: 1) { _, n in x[Int(n)] }, d], "src -> echo -> out", slice: 256)
            return renderFrames(g, frames: 9600, channels: 1)[0]
        }
        let exact = try render(smoothing: false)
        // 1/128 s and 1/64 s (exact in single precision): y[n] = x[n - 375] before frame 4800, x[n - 750] from it.
        for n in 0..<9600 {
            let D = n < 4800 ? 375 : 750
            XCTAssertEqual(exact[n], n >= D ? x[n - D] : 0, "frame \(n)")
            if exact[n] != (n >= D ? x[n - D] : 0) { break }
        }
        let smooth = try render(smoothing: true)
        XCTAssertTrue(smooth[1000..<4800] == exact[1000..<4800], "the same before the step (once the first crossfade, from the parameter's 1 s, is over)")
        XCTAssertGreaterThan(abs(smooth[4810] - exact[4810]), 1e-3, "the default crossfades over 10 ms")
        XCTAssertTrue(smooth[5400...] == exact[5400...], "the same once the crossfade is over")
    }
}
