// Tests of GainNode rendered offline against the spec's y = x·gain with the automation's values.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class GainNodeTests: XCTestCase {
    let sr = 48000.0

    func testDefaultsAreTheSpecs() {
        let g = GainNode(id: "amp", sampleRate: sr)
        XCTAssertEqual(g.parameter("gain")?.value, 1)
        XCTAssertEqual(g.parameter("gain")?.info.maxValue, Double(Float.greatestFiniteMagnitude))
        XCTAssertEqual(g.parameter("gain")?.info.minValue, -Double(Float.greatestFiniteMagnitude))
    }

    /// A stereo source times an automated gain (linear ramp, then exponential), checked sample by
    /// sample against x · AutomationTimeline.value(t) in single precision: exactly equal.
    func testAutomatedGainMultipliesEverySample() throws {
        let events: [AutomationEvent] = [.setValue(value: 0.5, time: 0), .linearRamp(value: -2, time: 0.05),
                                         .exponentialRamp(value: -0.01, time: 0.08)]
        let timeline = try AutomationTimeline(events: events, defaultValue: 1)
        func render(slice: Int, pattern: [Int]) throws -> [[Float]] {
            let amp = GainNode(id: "amp", sampleRate: sr)
            try amp.setAutomation(try AutomationTimeline(events: events, defaultValue: 1), for: "gain")
            let src = formulaSource("src", channels: 2) { c, n in Float(sin(Double(n) * (c == 0 ? 0.01 : 0.023))) }
            let g = try startedGraph([src, amp], "src -> amp -> out", slice: slice)
            return renderFrames(g, frames: 4800, channels: 2, slices: pattern)
        }
        let y = try render(slice: 512, pattern: [512])
        var worst: Float = 0
        for c in 0..<2 {
            for n in 0..<4800 {
                let x = Float(sin(Double(n) * (c == 0 ? 0.01 : 0.023)))
                let g = Float(timeline.value(atTime: Double(n) / sr))
                worst = max(worst, abs(y[c][n] - x * g))
            }
        }
        XCTAssertEqual(worst, 0, "worst error against x·gain")
        XCTAssertEqual(y, try render(slice: 64, pattern: [1, 64, 17, 33]), "slice sizes change the output")
    }

    func testSilentInputGivesSilentOutputAndAStepIsSampleExact() throws {
        let amp = GainNode(id: "amp", sampleRate: sr)
        try amp.setParameter("gain", -3)
        let src = formulaSource("src", channels: 1) { _, n in n < 100 ? 0.25 : 0 }
        let g = try startedGraph([src, amp], "src -> amp -> out", slice: 128)
        let y = renderFrames(g, frames: 128, channels: 1)[0]
        XCTAssertEqual(Array(y[0..<100]), [Float](repeating: -0.75, count: 100))
        XCTAssertEqual(Array(y[100...]), [Float](repeating: 0, count: 28))
    }
}
