// Tests of DynamicsCompressorNode against the Web Audio processing model in numpy (scripts/reference/dynamics_reference.py).
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

/// Runs scripts/reference/dynamics_reference.py on `x` (channel planes) and returns its output
/// planes and the lines it printed.
func dynamicsReference(_ test: XCTestCase, kind: String, rate: Double, x: [[Float]], values: [Double]) throws
    -> (y: [[Float]], printed: [String]) {
    let dir = try TestFiles.makeTemporaryDirectory(test)
    let input = dir.appendingPathComponent("in.f32"), output = dir.appendingPathComponent("out.f32")
    try x.flatMap { $0 }.withUnsafeBytes { Data($0) }.write(to: input)
    let printed = try ReferenceScript.run("dynamics_reference.py", arguments: [
        kind, "\(rate)", "\(x.count)", "\(x[0].count)", input.path, output.path] + values.map { "\($0)" }).data
    let data = try Data(contentsOf: output)
    let flat = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    let n = x[0].count
    return ((0..<x.count).map { Array(flat[($0 * n)..<(($0 + 1) * n)]) },
            String(decoding: printed, as: UTF8.self).split(separator: "\n").map(String.init))
}

final class DynamicsCompressorNodeTests: XCTestCase {
    let sr = 48000.0

    /// A stereo test signal: a 440/660 Hz pair whose level steps -40, 0, -12, -30 dBFS every
    /// quarter second, so the compressor attacks and releases.
    static func signal(_ c: Int, _ n: Int64) -> Float {
        let levels = [0.01, 1.0, 0.25, 0.0316]
        let level = levels[Int(n / 12000) % levels.count]
        let f = c == 0 ? 440.0 : 660.0
        return Float(level * sin(2 * Double.pi * f * Double(n) / 48000))
    }

    func compressor(_ values: [String: Double]) throws -> DynamicsCompressorNode {
        let node = DynamicsCompressorNode(id: "comp", sampleRate: sr)
        for (k, v) in values { try node.setParameter(k, v) }
        return node
    }

    func testDefaultsAndRangesAreWebAudios() {
        let node = DynamicsCompressorNode(id: "c", sampleRate: sr)
        XCTAssertEqual(node.parameter("threshold")?.value, -24)
        XCTAssertEqual(node.parameter("knee")?.value, 30)
        XCTAssertEqual(node.parameter("ratio")?.value, 12)
        XCTAssertEqual(node.parameter("attack")?.value, 0.003)
        XCTAssertEqual(node.parameter("release")?.value, 0.25)
        XCTAssertThrowsError(try node.setParameter("ratio", 21))
        XCTAssertThrowsError(try node.setParameter("threshold", 1))
        XCTAssertEqual(node.reduction, 0)
    }

    /// Worst error against the numpy reference of the spec's algorithm, for the defaults and for
    /// a hard-knee setting; the reduction meter agrees to 1e-3 dB.
    func testMatchesTheProcessingModelReference() throws {
        let frames = 48000
        let x = (0..<2).map { c in (0..<frames).map { Self.signal(c, Int64($0)) } }
        let settings: [[String: Double]] = [
            [:],
            ["threshold": -30, "knee": 0, "ratio": 4, "attack": 0.01, "release": 0.1],
            ["threshold": -50, "knee": 40, "ratio": 20, "attack": 0, "release": 0.05],
        ]
        for s in settings {
            let node = try compressor(s)
            let src = formulaSource("src", channels: 2) { c, n in Self.signal(c, n) }
            let g = try startedGraph([src, node], "src -> comp -> out", slice: 480)
            let y = renderFrames(g, frames: frames, channels: 2)
            let p = node.parameters.map(\.value)
            let ref = try dynamicsReference(self, kind: "compressor", rate: sr, x: x, values: p)
            var worst: Float = 0
            for c in 0..<2 { for i in 0..<frames { worst = max(worst, abs(y[c][i] - ref.y[c][i])) } }
            XCTAssertLessThan(worst, 2e-6, "settings \(s)")
            print("compressor \(s): worst |error| against the reference \(worst)")
            // 48000 frames = 375 whole quanta: the meter holds the last frame's reduction.
            XCTAssertEqual(Double(node.reduction), Double(ref.printed.last!)!, accuracy: 1e-3)
            // The 0 dBFS quarter (frames 12000..<24000, out 288 frames later) is compressed.
            let c = node.parameters.map(\.value)
            let makeup = pow(10, -0.6 * CompressionCurve(threshold: c[0], knee: c[1], ratio: c[2]).apply(0) / 20)
            XCTAssertLessThan(Double(y[0][16000..<24288].map(abs).max()!), 0.7 * makeup, "settings \(s)")
        }
    }

    /// The 6 ms look-ahead and the makeup gain with the spec's defaults: a quiet impulse comes
    /// out 288 frames later times 10^(-0.6·C(0)/20), C(0) = (1/12 - 1)·24²/60 (0 dB is in the knee).
    func testLookAheadAndMakeupGain() throws {
        let src = formulaSource("src", channels: 1) { _, n in n == 100 ? 0.001 : 0 }
        let g = try startedGraph([src, try compressor([:])], "src -> comp -> out", slice: 256)
        let y = renderFrames(g, frames: 1024, channels: 1)[0]
        let c0 = (1.0 / 12 - 1) * 24 * 24 / 60
        let makeup = pow(10, -0.6 * c0 / 20)
        XCTAssertEqual(Double(y[100 + 288]), 0.001 * makeup, accuracy: 1e-9)
        XCTAssertEqual(y.indices.filter { y[$0] != 0 }, [388])
    }

    /// Output does not depend on slice sizes, with the threshold and ratio automated (k-rate).
    func testOutputIsBitIdenticalForAnySliceSizes() throws {
        func render(_ slices: [Int]) throws -> [[Float]] {
            let node = try compressor([:])
            try node.setAutomation(try AutomationTimeline(events: [
                .setValue(value: -40, time: 0.2), .linearRamp(value: -10, time: 0.7)], defaultValue: -24), for: "threshold")
            try node.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 3, time: 0.3)], defaultValue: 12), for: "ratio")
            let src = formulaSource("src", channels: 2) { c, n in Self.signal(c, n) }
            let g = try startedGraph([src, node], "src -> comp -> out", slice: 512)
            return renderFrames(g, frames: 48000, channels: 2, slices: slices)
        }
        let whole = try render([512])
        XCTAssertEqual(try render([1, 17, 128, 333, 512, 7]), whole)
        XCTAssertEqual(try render([128]), whole)
    }
}
