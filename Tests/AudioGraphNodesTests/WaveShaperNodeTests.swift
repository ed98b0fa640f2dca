// Tests of WaveShaperNode: Web Audio's curve indexing and the documented oversampling against numpy/scipy.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class WaveShaperNodeTests: XCTestCase {
    let sr = 48000.0

    /// A sweep-ish test input that goes beyond ±1 (the curve's ends) with seeded noise.
    static func signal(_ c: Int, _ n: Int64) -> Float {
        let t = Double(n) / 48000
        return Float(1.3 * sin(2 * Double.pi * (300 + 2000 * t) * t + Double(c))) + Float(ConvolverNodeTests.noise(9, Int(n))) * 0.05
    }

    func reference(factor: Int, x: [Float], curve: [Float]) throws -> (y: [Float], taps: [Double]) {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let xin = dir.appendingPathComponent("x.f32"), cin = dir.appendingPathComponent("c.f32")
        let out = dir.appendingPathComponent("y.f32"), taps = dir.appendingPathComponent("h.f64")
        try x.withUnsafeBytes { Data($0) }.write(to: xin)
        try curve.withUnsafeBytes { Data($0) }.write(to: cin)
        try ReferenceScript.run("waveshaper_reference.py", arguments: ["\(factor)", xin.path, "\(x.count)", cin.path, out.path, taps.path])
        let y = try Data(contentsOf: out).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let h = try Data(contentsOf: taps).withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
        return (y, h)
    }

    func render(_ node: WaveShaperNode, frames: Int, slices: [Int]? = nil) throws -> [[Float]] {
        let src = formulaSource("src", channels: 2) { c, n in Self.signal(c, n) }
        let g = try startedGraph([src, node], "src -> ws -> out", slice: 512)
        return renderFrames(g, frames: frames, channels: 2, slices: slices)
    }

    /// Curves of several lengths (2, 3, an odd 1001-point tanh, 4096 points), each oversampling:
    /// worst error against numpy's curve indexing and scipy's firwin/upfirdn chain.
    func testMatchesTheReferenceForEveryOversampling() throws {
        let frames = 24000
        let curves: [[Float]] = [
            [-0.5, 1],
            [1, -1, 1],
            (0..<1001).map { Float(tanh(3 * (Double($0) / 500 - 1))) },
            (0..<4096).map { Float(sin(Double($0) * 0.01)) },
        ]
        for curve in curves {
            for oversample in WaveShaperOversample.allCases {
                let node = try WaveShaperNode(id: "ws", properties: WaveShaperProperties(curve: curve, oversample: oversample))
                let y = try render(node, frames: frames)
                for c in 0..<2 {
                    let x = (0..<frames).map { Self.signal(c, Int64($0)) }
                    let ref = try reference(factor: oversample.factor, x: x, curve: curve)
                    let worst = zip(y[c], ref.y).map { abs($0 - $1) }.max()!
                    print("waveShaper curve of \(curve.count), \(oversample.rawValue), channel \(c): worst error \(worst)")
                    XCTAssertLessThan(worst, oversample == .none ? 1e-6 : 2e-5, "curve of \(curve.count), \(oversample.rawValue)")
                    if oversample != .none {
                        let ours = WaveShaperNode.oversamplingFilter(factor: oversample.factor)
                        XCTAssertEqual(ours.count, ref.taps.count)
                        XCTAssertLessThan(zip(ours, ref.taps).map { abs($0 - $1) }.max()!, 1e-12, "the filter is not scipy's firwin")
                    }
                }
            }
        }
    }

    /// Web Audio's indexing at the curve's ends and between points, written out.
    func testCurveIndexing() throws {
        let curve = WaveShaperCurve([0, 10, 30])
        XCTAssertEqual(curve.shape(-1), 0)
        XCTAssertEqual(curve.shape(-2), 0)
        XCTAssertEqual(curve.shape(0), 10)
        XCTAssertEqual(curve.shape(0.5), 20)
        XCTAssertEqual(curve.shape(1), 30)
        XCTAssertEqual(curve.shape(7), 30)
        XCTAssertEqual(curve.shape(.nan), 0)
    }

    /// With an identity curve, 2x and 4x delay the input by exactly 32 frames (the documented
    /// latency) and keep a 1 kHz tone within the filters' passband ripple.
    func testOversamplingLatencyIs32Frames() throws {
        for oversample in [WaveShaperOversample.twice, .fourTimes] {
            let node = try WaveShaperNode(id: "ws", properties: WaveShaperProperties(curve: [-1, 1], oversample: oversample))
            let src = formulaSource("src", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000)) }
            let g = try startedGraph([src, node], "src -> ws -> out")
            let y = renderFrames(g, frames: 4800, channels: 1)[0]
            for n in 1000..<4800 { XCTAssertEqual(Double(y[n]), 0.5 * sin(2 * Double.pi * 1000 * Double(n - 32) / 48000), accuracy: 1e-3) }
        }
    }

    func testOutputIsBitIdenticalForAnySliceSizesAndCurveChangesApply() throws {
        func run(_ slices: [Int]) throws -> [[Float]] {
            try render(try WaveShaperNode(id: "ws", properties: WaveShaperProperties(curve: [-1, 0.2, 1], oversample: .fourTimes)),
                       frames: 9000, slices: slices)
        }
        XCTAssertEqual(try run([1, 17, 333, 512, 7]), try run([512]))
        let node = try WaveShaperNode(id: "ws", properties: WaveShaperProperties(curve: [-1, 1]))
        XCTAssertThrowsError(try node.setProperty("curve", [Float(1)]))
        XCTAssertThrowsError(try node.setProperty("oversample", "8x"))
        let src = formulaSource("src", channels: 1) { _, _ in 0.5 }
        let g = try startedGraph([src, node], "src -> ws -> out")
        XCTAssertEqual(renderFrames(g, frames: 4, channels: 1)[0], [0.5, 0.5, 0.5, 0.5])
        try node.setProperty("curve", [Float(2), 4])
        try g.update(waitUntilApplied: false)
        XCTAssertEqual(renderFrames(g, frames: 4, channels: 1)[0], [3.5, 3.5, 3.5, 3.5])
    }
}
