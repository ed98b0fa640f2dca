// Tests of StereoPannerNode against the W3C StereoPannerNode algorithm written out here in Double.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class StereoPannerNodeTests: XCTestCase {
    let sr = 48000.0

    /// The spec's algorithm (https://www.w3.org/TR/webaudio/#stereopanner-algorithm).
    static func reference(_ inputs: [Double], pan p: Double) -> (Double, Double) {
        let p = min(max(p, -1), 1)
        if inputs.count == 1 {
            let x = (p + 1) / 2
            return (inputs[0] * cos(x * .pi / 2), inputs[0] * sin(x * .pi / 2))
        }
        let x = p <= 0 ? p + 1 : p
        let gl = cos(x * .pi / 2), gr = sin(x * .pi / 2)
        let l = inputs[0], r = inputs[1]
        return p <= 0 ? (l + r * gl, r * gr) : (l * gl, r + l * gr)
    }

    /// Mono and stereo inputs under a pan swept -1 → 1 by automation: within 2e-7 of the formula.
    func testMonoAndStereoAgainstTheSpecUnderAutomation() throws {
        for channels in [1, 2] {
            let events: [AutomationEvent] = [.setValue(value: -1, time: 0), .linearRamp(value: 1, time: 0.1)]
            let timeline = try AutomationTimeline(events: events, defaultValue: 0)
            @Sendable func input(_ c: Int, _ n: Int64) -> Float { Float(0.8 * sin(Double(n) * (c == 0 ? 0.013 : 0.031))) }
            func render(slice: Int, pattern: [Int]) throws -> [[Float]] {
                let pan = StereoPannerNode(id: "pan", sampleRate: sr)
                try pan.setAutomation(try AutomationTimeline(events: events, defaultValue: 0), for: "pan")
                let g = try startedGraph([formulaSource("src", channels: channels) { c, n in input(c, n) }, pan], "src -> pan -> out", slice: slice)
                return renderFrames(g, frames: 4800, channels: 2, slices: pattern)
            }
            let y = try render(slice: 512, pattern: [512])
            var worst = 0.0
            for n in 0..<4800 {
                let p = Double(Float(timeline.value(atTime: Double(n) / sr)))
                let x = (0..<channels).map { Double(input($0, Int64(n))) }
                let (l, r) = Self.reference(x, pan: p)
                worst = max(worst, abs(Double(y[0][n]) - l), abs(Double(y[1][n]) - r))
            }
            XCTAssertLessThan(worst, 2e-7, "\(channels) channel(s)")
            print("stereoPanner \(channels) ch: worst error \(worst)")
            XCTAssertEqual(y, try render(slice: 128, pattern: [1, 128, 45, 7]))
        }
    }

    /// A quad input is first down-mixed to stereo (speakers: L = (L+SL)/2, R = (R+SR)/2).
    func testQuadInputIsDownMixedToStereoFirst() throws {
        let pan = StereoPannerNode(id: "pan", sampleRate: sr)
        try pan.setParameter("pan", 0.3)
        let values: [Float] = [0.1, 0.2, 0.3, 0.4]
        let g = try startedGraph([formulaSource("src", channels: 4) { c, _ in values[c] }, pan], "src -> pan -> out", slice: 64)
        let y = renderFrames(g, frames: 64, channels: 2)
        let (l, r) = Self.reference([0.5 * (0.1 + 0.3), 0.5 * (0.2 + 0.4)], pan: 0.3)
        XCTAssertEqual(Double(y[0][10]), l, accuracy: 1e-7)
        XCTAssertEqual(Double(y[1][10]), r, accuracy: 1e-7)
        XCTAssertEqual(pan.outputFormats[0].channelCount, 2)
    }
}
