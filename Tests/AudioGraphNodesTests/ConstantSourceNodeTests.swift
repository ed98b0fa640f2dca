// Tests of ConstantSourceNode: its offset with automation, start and stop frames.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class ConstantSourceNodeTests: XCTestCase {
    let sr = 48000.0

    func testOffsetFollowsItsAutomationBetweenStartAndStop() throws {
        let events: [AutomationEvent] = [.setValue(value: 2, time: 0.01), .setTarget(target: -1, startTime: 0.02, timeConstant: 0.005),
                                         .setValueCurve(values: [0, 3, 1], startTime: 0.05, duration: 0.02)]
        let timeline = try AutomationTimeline(events: events, defaultValue: 1)
        func render(pattern: [Int]) throws -> [[Float]] {
            let source = ConstantSourceNode(id: "c", sampleRate: sr, options: .init(channels: 2, startTime: 0.005, stopTime: 0.09))
            try source.setAutomation(try AutomationTimeline(events: events, defaultValue: 1), for: "offset")
            let g = try startedGraph([source], "c -> out", slice: 256)
            return renderFrames(g, frames: 4800, channels: 2, slices: pattern)
        }
        let y = try render(pattern: [256])
        for n in 0..<4800 {
            let expected: Float = n < 240 || n >= 4320 ? 0 : Float(timeline.value(atTime: Double(n) / sr))
            XCTAssertEqual(y[0][n], expected, "frame \(n)")
            if y[0][n] != expected { break }
        }
        XCTAssertEqual(y[0], y[1])
        XCTAssertEqual(y, try render(pattern: [3, 256, 100]))
    }

    func testDefaultOffsetIsOne() throws {
        let g = try startedGraph([ConstantSourceNode(id: "c", sampleRate: sr)], "c -> out", slice: 64)
        XCTAssertEqual(renderFrames(g, frames: 64, channels: 1)[0], [Float](repeating: 1, count: 64))
    }

    /// The W3C `large-endtime` cases on an engine built in code: ramps to 1e300 s and to the
    /// largest double hold their start values (the spec's formula: (t − t0)/(t1 − t0) ≈ 0), a
    /// setTarget at 1e300 s has not begun; nothing traps, every sample is finite.
    func testLargeEndTimesRenderTheSpecsValues() throws {
        let cases: [([AutomationEvent], Float)] = [
            ([.setValue(value: 0.25, time: 0), .linearRamp(value: 1, time: 1e300)], 0.25),
            ([.setValue(value: 0.25, time: 0), .exponentialRamp(value: 1, time: .greatestFiniteMagnitude)], 0.25),
            ([.setValue(value: 0.25, time: 0), .setTarget(target: 1, startTime: 1e300, timeConstant: 1e300)], 0.25),
            ([.setValueCurve(values: [0.25, 1], startTime: 1e308, duration: 1e308)], 1),   // its end overflows to infinity
        ]
        for (events, expected) in cases {
            let source = ConstantSourceNode(id: "c", sampleRate: sr)
            try source.setAutomation(try AutomationTimeline(events: events, defaultValue: 1), for: "offset")
            let g = try startedGraph([source], "c -> out", slice: 512)
            let y = renderFrames(g, frames: 4096, channels: 1)[0]
            XCTAssertEqual(y, [Float](repeating: expected, count: 4096), "\(events)")
        }
    }
}
