// Tests of DistortionNode rendered offline against the formulas of Docs/Nodes.md written again in
// Python (scripts/reference/distortion_reference.py): defaults, every preset, parameter steps,
// slice-size independence, the dry path and bad samples.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class DistortionNodeTests: XCTestCase {
    let sr = 48000.0

    /// Two tones with a decaying envelope that reaches ±0.95 (into the clipper with the hotter
    /// presets), a different mix per channel, then silence from frame 14000 (echo tails).
    static func signal(_ c: Int, _ n: Int64) -> Float {
        guard n < 14000 else { return 0 }
        let t = Double(n) / 48000
        let envelope = 0.95 * exp(-2 * t)
        let a = sin(2 * Double.pi * 220 * t + Double(c)), b = sin(2 * Double.pi * (c == 0 ? 3170 : 1234.5) * t)
        return Float(envelope * (0.7 * a + 0.3 * b))
    }

    /// The node's output for `frames` frames of ``signal``, rendered in `slices`.
    func render(_ node: DistortionNode, frames: Int, channels: Int = 2, slices: [Int]? = nil) throws -> [[Float]] {
        let src = formulaSource("x", channels: channels) { c, n in Self.signal(c, n) }
        let g = try startedGraph([src, node], "x -> dist -> out", slice: 512)
        return renderFrames(g, frames: frames, channels: channels, slices: slices)
    }

    /// The reference script's output for `frames` frames of ``signal`` with per-frame parameter
    /// values `parameter(index, frame)`.
    func reference(frames: Int, channels: Int = 2, parameter: (Int, Int) -> Float) throws -> [[Float]] {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let input = (0..<channels).flatMap { c in (0..<frames).map { Self.signal(c, Int64($0)) } }
        let params = (0..<16).flatMap { p in (0..<frames).map { parameter(p, $0) } }
        let paths = ["in", "params", "out"].map { dir.appendingPathComponent("\($0).f32").path }
        try input.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: paths[0]))
        try params.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: paths[1]))
        try ReferenceScript.run("distortion_reference.py", arguments: ["\(sr)", "\(channels)"] + paths)
        let data = try Data(contentsOf: URL(fileURLWithPath: paths[2]))
        let all = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (0..<channels).map { Array(all[$0 * frames..<($0 + 1) * frames]) }
    }

    /// The largest difference between two renders and where it is.
    func worst(_ a: [[Float]], _ b: [[Float]]) -> (error: Float, channel: Int, frame: Int) {
        var result: (Float, Int, Int) = (0, 0, 0)
        for c in a.indices { for n in a[c].indices where abs(a[c][n] - b[c][n]) > result.0 { result = (abs(a[c][n] - b[c][n]), c, n) } }
        return result
    }

    func testTheTableIsAUDistortionsAndPresetsSetEveryParameterWithinIt() throws {
        let node = DistortionNode(id: "dist", sampleRate: sr)
        let expectedDefaults: [Double] = [0.1, 1, 50, 50, 0, 50, 1, 0, 0, 50, 100, 100, 50, 0, -6, 50]
        XCTAssertEqual(DistortionPreset.parameterNames.map { node.parameter($0)!.value }, expectedDefaults)
        XCTAssertEqual(DistortionPreset.allCases.count, 22)
        for preset in DistortionPreset.allCases {
            XCTAssertEqual(preset.values.count, 16, "\(preset)")
            let n = DistortionNode(id: "dist", sampleRate: sr, preset: preset)
            for (name, value) in zip(DistortionPreset.parameterNames, preset.values) {
                XCTAssertTrue(n.parameter(name)!.info.minValue <= value && value <= n.parameter(name)!.info.maxValue, "\(preset).\(name) = \(value)")
                XCTAssertEqual(n.parameter(name)!.value, value, accuracy: 1e-4, "\(preset).\(name)")
            }
        }
    }

    /// The defaults and each of the 22 presets against the reference, 24000 frames (stereo).
    func testDefaultsAndEveryPresetMatchTheReference() throws {
        let frames = 24000
        var worstOverall: Float = 0
        for preset in [nil] + DistortionPreset.allCases.map(Optional.some) {
            let node = DistortionNode(id: "dist", sampleRate: sr, preset: preset)
            let values = DistortionPreset.parameterNames.map { Float(node.parameter($0)!.value) }
            let y = try render(node, frames: frames)
            let r = try reference(frames: frames) { p, _ in values[p] }
            let w = worst(y, r)
            worstOverall = max(worstOverall, w.error)
            XCTAssertLessThanOrEqual(w.error, 1e-6, "\(preset.map(\.rawValue) ?? "defaults"): channel \(w.channel) frame \(w.frame)")
            // Not the input, and not silent: every preset does something audible.
            let change = worst(y, (0..<2).map { c in (0..<frames).map { Self.signal(c, Int64($0)) } })
            XCTAssertGreaterThan(change.error, 0.01, "\(preset.map(\.rawValue) ?? "defaults") left the input unchanged")
        }
        print("distortion: worst difference from the reference over the defaults and 22 presets: \(worstOverall)")
    }

    /// Steps at known frames on six parameters (through automation), against the reference
    /// given the same per-frame values.
    func testParameterStepsAreSampleExactAndMatchTheReference() throws {
        let frames = 20000
        let node = DistortionNode(id: "dist", sampleRate: sr, preset: .multiEverythingIsBroken)
        let steps: [(name: String, frame: Int, value: Double)] = [
            ("delay", 3001, 12.5), ("decimation", 5003, 20), ("rounding", 7007, 90),
            ("ringModFreq1", 9011, 800), ("softClipGain", 11013, -20), ("finalMix", 13017, 0),
        ]
        for s in steps {
            try node.setAutomation(try AutomationTimeline(events: [.setValue(value: s.value, time: Double(s.frame) / sr)],
                                                          defaultValue: node.parameter(s.name)!.value), for: s.name)
        }
        let base = DistortionNode.init(id: "b", sampleRate: sr, preset: .multiEverythingIsBroken)
        let values = DistortionPreset.parameterNames.map { Float(base.parameter($0)!.value) }
        let y = try render(node, frames: frames, slices: [333, 17, 1000])
        let r = try reference(frames: frames) { p, n in
            for s in steps where DistortionPreset.parameterNames[p] == s.name && n >= s.frame { return Float(s.value) }
            return values[p]
        }
        let w = worst(y, r)
        XCTAssertLessThanOrEqual(w.error, 1e-6, "channel \(w.channel) frame \(w.frame)")
        // From the finalMix step on, the input passes bit for bit.
        for c in 0..<2 { for n in 13017..<frames { XCTAssertEqual(y[c][n], Self.signal(c, Int64(n))) } }
    }

    /// Ramps and steps on every stage: the same samples whatever the slice sizes.
    func testOutputIsBitIdenticalAcrossSliceSizes() throws {
        func make() throws -> DistortionNode {
            let node = DistortionNode(id: "dist", sampleRate: sr, preset: .multiEverythingIsBroken)
            try node.setAutomation(try AutomationTimeline(events: [.linearRamp(value: 300, time: 0.3)], defaultValue: 5), for: "delay")
            try node.setAutomation(try AutomationTimeline(events: [.linearRamp(value: 100, time: 0.25)], defaultValue: 0), for: "decimation")
            try node.setAutomation(try AutomationTimeline(events: [.exponentialRamp(value: 4000, time: 0.4)], defaultValue: 20), for: "ringModFreq2")
            try node.setAutomation(try AutomationTimeline(events: [.setValue(value: 3, time: 0.1), .linearRamp(value: 20, time: 0.35)],
                                                          defaultValue: 0), for: "cubicTerm")
            return node
        }
        let whole = try render(try make(), frames: 24000, slices: [512])
        for pattern in [[1], [17, 333, 64], [480, 7]] {
            XCTAssertEqual(try render(try make(), frames: 24000, slices: pattern), whole, "slices \(pattern)")
        }
        XCTAssertGreaterThan(worst(whole, (0..<2).map { c in (0..<24000).map { Self.signal(c, Int64($0)) } }).error, 0.05)
    }

    func testFinalMixZeroPassesTheInputAndMonoWorks() throws {
        let node = DistortionNode(id: "dist", sampleRate: sr, preset: .multiBrokenSpeaker)
        try node.setParameter("finalMix", 0)
        let y = try render(node, frames: 4800, channels: 1)
        XCTAssertEqual(y[0], (0..<4800).map { Self.signal(0, Int64($0)) })
    }

    func testAnInfiniteSampleLeavesNoTraceInTheEcho() throws {
        // multiEcho2: 400 ms echoes; an infinity at frame 100 of an otherwise silent input.
        let node = DistortionNode(id: "dist", sampleRate: sr, preset: .multiEcho2)
        let src = formulaSource("x", channels: 1) { _, n in n == 100 ? .infinity : n == 200 ? 0.5 : 0 }
        let g = try startedGraph([src, node], "x -> dist -> out")
        let y = renderFrames(g, frames: 48000, channels: 1)[0]
        XCTAssertTrue(y.enumerated().allSatisfy { $0.offset == 100 || $0.element.isFinite })
        // The impulse at 200 echoes at 200 + 19200 (r = exp(-0.5), through the soft clipper and the mix).
        XCTAssertGreaterThan(abs(y[19400]), 0.01)
        XCTAssertEqual(y[19300], 0)
    }

    func testStateMemoryIsTheEchoLine() {
        let node = DistortionNode(id: "dist", sampleRate: sr)
        let estimate = node.stateMemoryEstimate(outputFormat: StreamFormat(sampleRate: 48000, channelCount: 2))
        XCTAssertEqual(estimate?.bytes, Int64(24002 * 8 * 2))
        XCTAssertEqual(Distortion(sampleRate: 48000, channelCount: 2).capacity, 24002)
    }
}
