// Tests of VarispeedNode rendered offline against the position formula t_{n+1} = t_n + rate_n.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class VarispeedNodeTests: XCTestCase {
    let sr = 48000.0

    /// A tone of `frequency` Hz and amplitude 0.5 for `frames` input frames, then silence.
    func toneBurst(frequency: Double, frames: Int, channels: Int = 1) -> RenderCallbackNode {
        formulaSource("tone", channels: channels) { c, n in
            n < frames ? Float(0.5 * sin(2 * Double.pi * frequency * Double(n) / 48000 + Double(c))) : 0
        }
    }

    func varispeed(rate: Double) throws -> VarispeedNode {
        let v = VarispeedNode(id: "vs", sampleRate: sr)
        try v.setParameter("rate", rate)
        return v
    }

    /// Index one past the last sample above `threshold`.
    func end(_ y: [Float], threshold: Float = 1e-3) -> Int { (y.lastIndex { abs($0) > threshold } ?? -1) + 1 }

    func testDefaultsAreTheSpecs() {
        let v = VarispeedNode(id: "v", sampleRate: sr)
        XCTAssertEqual(v.parameter("rate")?.value, 1)
        XCTAssertEqual(v.parameter("rate")?.info.minValue, 0.25)
        XCTAssertEqual(v.parameter("rate")?.info.maxValue, 4)
        XCTAssertEqual(v.parameter("bypass")?.value, 0)
    }

    func testRateTwoHalvesTheLengthAndDoublesTheFrequency() throws {
        let g = try startedGraph([toneBurst(frequency: 1000, frames: 24000), try varispeed(rate: 2)], "tone -> vs -> out")
        let y = renderFrames(g, frames: 24000, channels: 1)[0]
        // The burst of 24000 input frames lasts 12000 output frames (the kernel's reach blurs the edge).
        XCTAssertEqual(end(y), 12000, accuracy: 70)
        let body = Array(y[200..<11800])
        let fit = toneFit(body, frequency: 2000, sampleRate: sr)
        XCTAssertEqual(fit.amplitude, 0.5, accuracy: 1e-3)
        XCTAssertLessThan(fit.residualRMS, 1e-4)
        // Nothing is left at the input's frequency (both fitted together).
        XCTAssertLessThan(ToneFit(body, sampleRate: sr, frequencies: [1000, 2000]).tones[0].amplitude, 1e-5)
        // Sample by sample: y[n] = x(2n).
        let e = SignalMeasurement.worstError(y, 200..<11800) { 0.5 * sin(2 * Double.pi * 1000 * Double(2 * $0) / 48000) }
        XCTAssertLessThan(e.error, 1e-4, "at frame \(e.at)")
    }

    func testRateOneHalfDoublesTheLengthAndHalvesTheFrequency() throws {
        let g = try startedGraph([toneBurst(frequency: 1000, frames: 12000), try varispeed(rate: 0.5)], "tone -> vs -> out")
        let y = renderFrames(g, frames: 30000, channels: 1)[0]
        XCTAssertEqual(end(y), 24000, accuracy: 140)
        let body = Array(y[300..<23700])
        let fit = toneFit(body, frequency: 500, sampleRate: sr)
        XCTAssertEqual(fit.amplitude, 0.5, accuracy: 1e-3)
        XCTAssertLessThan(fit.residualRMS, 1e-4)
        let e = SignalMeasurement.worstError(y, 300..<23700) { 0.5 * sin(2 * Double.pi * 1000 * (Double($0) / 2) / 48000) }
        XCTAssertLessThan(e.error, 1e-4, "at frame \(e.at)")
    }

    func testSliceSizesGiveIdenticalOutput() throws {
        func render(_ slices: [Int]) throws -> [[Float]] {
            let v = try varispeed(rate: 1.37)
            try v.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 0.6, time: 0.1), .linearRamp(value: 3.2, time: 0.3)], defaultValue: 1.37), for: "rate")
            let g = try startedGraph([toneBurst(frequency: 700, frames: 40000, channels: 2), v], "tone -> vs -> out")
            return renderFrames(g, frames: 20000, channels: 2, slices: slices)
        }
        let reference = try render([512])
        XCTAssertEqual(try render([64]), reference)
        XCTAssertEqual(try render([100]), reference)
        XCTAssertGreaterThan(reference[1].map { abs($0) }.max()!, 0.4)
    }

    /// An automation step at frame F: t_n = n up to F, then F + 1.5 (n - F); the waveform follows
    /// the formula through the step (sample-exact, no jump).
    func testRateStepTakesEffectAtItsFrameWithoutAJump() throws {
        let f = 10007
        let v = try varispeed(rate: 1)
        try v.setAutomation(try AutomationTimeline(events: [.setValue(value: 1.5, time: Double(f) / sr)], defaultValue: 1),
                            for: "rate")
        let g = try startedGraph([toneBurst(frequency: 1000, frames: 100000), v], "tone -> vs -> out", slice: 100)
        let y = renderFrames(g, frames: 20000, channels: 1)[0]
        func t(_ n: Int) -> Double { n <= f ? Double(n) : Double(f) + 1.5 * Double(n - f) }
        let e = SignalMeasurement.worstError(y, 0..<20000) { 0.5 * sin(2 * Double.pi * 1000 * t($0) / 48000) }
        XCTAssertLessThan(e.error, 1e-4, "at frame \(e.at)")
        // Placing the step one frame off is visible: the formula then misses by far more.
        func t2(_ n: Int) -> Double { n <= f + 1 ? Double(n) : Double(f + 1) + 1.5 * Double(n - f - 1) }
        XCTAssertGreaterThan(SignalMeasurement.worstError(y, 0..<20000) { 0.5 * sin(2 * Double.pi * 1000 * t2($0) / 48000) }.error, 1e-2)
    }

    func testRateOneAndBypassPassTheInputBitForBit() throws {
        let src = toneBurst(frequency: 1234, frames: 30000, channels: 2)
        let v = try varispeed(rate: 1)
        let g = try startedGraph([src, v], "tone -> vs -> out", slice: 100)
        let y = renderFrames(g, frames: 10000, channels: 2)
        for c in 0..<2 {
            XCTAssertEqual(y[c], (0..<10000).map { Float(0.5 * sin(2 * Double.pi * 1234 * Double($0) / 48000 + Double(c))) })
        }
        let bypassed = try varispeed(rate: 3)
        try bypassed.setParameter("bypass", 1)
        let g2 = try startedGraph([toneBurst(frequency: 1234, frames: 30000, channels: 2), bypassed], "tone -> vs -> out")
        XCTAssertEqual(renderFrames(g2, frames: 10000, channels: 2), y)
    }

    func testLookaheadIsTheKernelsReach() {
        XCTAssertEqual(VariableRateResampler.lookahead(rate: 1), 68)   // ceil(64 / 0.95)
        XCTAssertEqual(VariableRateResampler.lookahead(rate: 0.25), 68)
        XCTAssertEqual(VariableRateResampler.lookahead(rate: 4), 270)  // ceil(64 * 4 / 0.95)
    }
}
