// Tests of DynamicsProcessorNode against the numpy reference of its documented curves (scripts/reference/dynamics_reference.py).
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class DynamicsProcessorNodeTests: XCTestCase {
    let sr = 48000.0

    func testDefaultsAreAUDynamicsProcessors() {
        let node = DynamicsProcessorNode(id: "d", sampleRate: sr)
        XCTAssertEqual(node.parameter("threshold")?.value, -20)
        XCTAssertEqual(node.parameter("headRoom")?.value, 5)
        XCTAssertEqual(node.parameter("expansionRatio")?.value, 2)
        XCTAssertEqual(node.parameter("attackTime")?.value, 0.001)
        XCTAssertEqual(node.parameter("releaseTime")?.value, 0.05)
        XCTAssertEqual(node.parameter("overallGain")?.value, 0)
    }

    /// Compression, expansion and overall gain on the compressor's stepped test signal (plus a
    /// -90 dB passage for the expander): worst error against the reference; the compression
    /// amount agrees; loud passages never exceed threshold + head room for long.
    func testMatchesTheReference() throws {
        let frames = 60000
        @Sendable func signal(_ c: Int, _ n: Int64) -> Float {
            n >= 48000 ? DynamicsCompressorNodeTests.signal(c, n) * 0.00003 : DynamicsCompressorNodeTests.signal(c, n)
        }
        let x = (0..<2).map { c in (0..<frames).map { signal(c, Int64($0)) } }
        for s: [String: Double] in [[:], ["threshold": -30, "headRoom": 2, "expansionThreshold": -60, "expansionRatio": 4,
                                          "attackTime": 0.01, "releaseTime": 0.2, "overallGain": 6]] {
            let node = DynamicsProcessorNode(id: "dyn", sampleRate: sr)
            for (k, v) in s { try node.setParameter(k, v) }
            let src = formulaSource("src", channels: 2) { c, n in signal(c, n) }
            let g = try startedGraph([src, node], "src -> dyn -> out", slice: 480)
            let y = renderFrames(g, frames: frames, channels: 2)
            let ref = try dynamicsReference(self, kind: "dynamicsProcessor", rate: sr, x: x, values: node.parameters.map(\.value))
            var worst: Float = 0
            for c in 0..<2 { for i in 0..<frames { worst = max(worst, abs(y[c][i] - ref.y[c][i]) / max(1e-3, abs(ref.y[c][i]))) } }
            print("dynamicsProcessor \(s): worst relative error against the reference \(worst)")
            XCTAssertLessThan(worst, 1e-5, "settings \(s)")
            XCTAssertEqual(Double(node.compressionAmount), Double(ref.printed.last!)!, accuracy: 1e-3)
            XCTAssertLessThan(node.compressionAmount, -10, "the quiet passage is expanded down")
        }
    }
}
