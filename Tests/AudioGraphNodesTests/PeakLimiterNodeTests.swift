// Tests of PeakLimiterNode: the ceiling under hostile input, the numpy reference of its formula, slice independence.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class PeakLimiterNodeTests: XCTestCase {
    let sr = 48000.0

    /// Full-scale square bursts (±1, 24-frame half periods, 50 ms on / 30 ms off) over seeded
    /// noise, the right channel inverted and louder: what a limiter must hold.
    static func hostile(_ c: Int, _ n: Int64) -> Float {
        let burst = (n % 3840) < 2400
        let square: Float = (n / 24) % 2 == 0 ? 1 : -1
        var h = UInt64(bitPattern: n &* 6364136223846793005 &+ 1442695040888963407)
        h ^= h >> 33
        let noise = Float(Double(h % 10000) / 5000 - 1) * 0.3
        let v = (burst ? square : 0) + noise
        return c == 0 ? v : -1.2 * v
    }

    func limiter(_ values: [String: Double]) throws -> PeakLimiterNode {
        let node = PeakLimiterNode(id: "lim", sampleRate: sr)
        for (k, v) in values { try node.setParameter(k, v) }
        return node
    }

    func testDefaultsAreAUPeakLimiters() {
        let node = PeakLimiterNode(id: "l", sampleRate: sr)
        XCTAssertEqual(node.parameter("attackTime")?.value, 0.012)
        XCTAssertEqual(node.parameter("decayTime")?.value, 0.024)
        XCTAssertEqual(node.parameter("preGain")?.value, 0)
        XCTAssertEqual(node.parameter("ceiling")?.value, 0)
        XCTAssertEqual(PeakLimiterNode.lookAheadFrames(attackTime: 0.012, sampleRate: sr), 576)
    }

    /// +20 dB of pre-gain on full-scale square bursts: no sample above the ceiling, for several
    /// attack/decay settings and ceilings; and the output equals the numpy reference of the
    /// formula (sliding minimum, boxcar, release), so the ceiling is held by the gain and not
    /// by the final clamp alone.
    func testNeverExceedsTheCeilingAndMatchesTheReference() throws {
        let frames = 48000
        let x = (0..<2).map { c in (0..<frames).map { Self.hostile(c, Int64($0)) } }
        let settings: [[String: Double]] = [
            ["preGain": 20],
            ["preGain": 20, "ceiling": -1, "attackTime": 0.001, "decayTime": 0.001],
            ["preGain": 40, "ceiling": -6, "attackTime": 0.03, "decayTime": 0.06],
            ["preGain": 0, "ceiling": -0.1, "attackTime": 0.005],
        ]
        for s in settings {
            let node = try limiter(s)
            let src = formulaSource("src", channels: 2) { c, n in Self.hostile(c, n) }
            let g = try startedGraph([src, node], "src -> lim -> out", slice: 512)
            let y = renderFrames(g, frames: frames, channels: 2)
            let ceiling = Float(pow(10, (s["ceiling"] ?? 0) / 20))
            let peak = y.map { $0.map(abs).max()! }.max()!
            XCTAssertLessThanOrEqual(peak, ceiling, "settings \(s)")
            XCTAssertGreaterThan(peak, ceiling * 0.9, "the limiter should reach its ceiling on this input")
            let p = node.parameters.map(\.value)
            let ref = try dynamicsReference(self, kind: "limiter", rate: sr, x: x, values: p)
            var worst: Float = 0
            for c in 0..<2 { for i in 0..<frames { worst = max(worst, abs(y[c][i] - ref.y[c][i])) } }
            XCTAssertLessThan(worst, 1e-6, "settings \(s)")
            // Before the clamp the gain alone keeps the peak within Float rounding of the ceiling.
            XCTAssertLessThanOrEqual(Double(ref.printed.last!)!, 1 + 1e-6, "settings \(s)")
            print("limiter \(s): peak \(peak) (ceiling \(ceiling)), worst |error| against the reference \(worst)")
        }
    }

    /// A signal below the ceiling passes unchanged, only delayed by the look-ahead.
    func testQuietSignalPassesDelayedBitForBit() throws {
        let src = formulaSource("src", channels: 1) { _, n in Float(0.5 * sin(Double(n) * 0.01)) }
        let g = try startedGraph([src, try limiter(["attackTime": 0.005])], "src -> lim -> out", slice: 256)
        let y = renderFrames(g, frames: 4000, channels: 1)[0]
        XCTAssertEqual(Array(y[0..<240]), [Float](repeating: 0, count: 240))
        for n in 240..<4000 { XCTAssertEqual(y[n], Float(0.5 * sin(Double(n - 240) * 0.01))) }
    }

    func testOutputIsBitIdenticalForAnySliceSizes() throws {
        func render(_ slices: [Int]) throws -> [[Float]] {
            let node = try limiter(["preGain": 12])
            try node.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 0.002, time: 0.25), .linearRamp(value: 0.02, time: 0.8)], defaultValue: 0.012), for: "attackTime")
            try node.setAutomation(try AutomationTimeline(events: [
                .linearRamp(value: -12, time: 1)], defaultValue: 0), for: "ceiling")
            let src = formulaSource("src", channels: 2) { c, n in Self.hostile(c, n) }
            let g = try startedGraph([src, node], "src -> lim -> out", slice: 512)
            return renderFrames(g, frames: 48000, channels: 2, slices: slices)
        }
        let whole = try render([512])
        XCTAssertEqual(try render([1, 17, 128, 333, 512, 7]), whole)
    }
}
