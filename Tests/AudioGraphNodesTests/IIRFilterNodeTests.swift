// Tests of IIRFilterNode against scipy.signal.lfilter and freqz (scripts/reference/iir_reference.py).
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class IIRFilterNodeTests: XCTestCase {
    let sr = 48000.0

    /// scipy's lfilter output of `x` and freqz at `frequencies`.
    private func scipy(b: [Double], a: [Double], x: [Float], frequencies: [Double]) throws -> (y: [Double], magnitude: [Double], phase: [Double]) {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let input = dir.appendingPathComponent("x.f32")
        try x.withUnsafeBytes { Data($0) }.write(to: input)
        func list(_ v: [Double]) -> String { v.map { "\($0)" }.joined(separator: ",") }
        let values = try ReferenceScript.run("iir_reference.py", arguments: [list(b), list(a), input.path, "\(sr)", list(frequencies)]).doubles
        let n = x.count, m = frequencies.count
        XCTAssertEqual(values.count, n + 2 * m)
        return (Array(values[0..<n]), Array(values[n..<n + m]), Array(values[(n + m)...]))
    }

    /// Three filters (a 4th-order Butterworth low-pass written with a0 = 2, an odd-order
    /// filter with more feedforward than feedback terms, a pure FIR) on a seeded noise + tone
    /// input, stereo: every sample within 1e-6 of scipy's lfilter (Float output of a Double
    /// recurrence), the response within 1e-12 of freqz, and the same output for any slicing.
    func testOutputAndResponseMatchScipy() throws {
        let cases: [(b: [Double], a: [Double])] = [
            // scipy.signal.butter(4, 2000, fs=48000), all coefficients doubled.
            ([2 * 0.00021313872697507864, 2 * 0.0008525549079003145, 2 * 0.0012788323618504718, 2 * 0.0008525549079003145, 2 * 0.00021313872697507864],
             [2, 2 * -3.3168079106244175, 2 * 4.174245550076573, 2 * -2.3574027805622575, 2 * 0.5033753607417041]),
            ([0.3, -0.2, 0.15, 0.05, -0.01, 0.02], [1, -0.5, 0.25, -0.125]),
            ([0.2, 0.2, 0.2, 0.2, 0.2], [1]),
        ]
        var random = SeededRandom(seed: 7)
        let frames = 6000
        let x0 = (0..<frames).map { n in Float(0.3 * sin(Double(n) * 0.07) + 0.2 * (Double.random(in: -1...1, using: &random))) }
        let x1 = (0..<frames).map { n in n == 10 ? Float(1) : 0 }
        let frequencies: [Double] = [0, 100, 1000, 2000, 5000, 12000, 24000]
        for (b, a) in cases {
            func render(slice: Int, pattern: [Int]) throws -> [[Float]] {
                let filter = try IIRFilterNode(id: "iir", options: .init(feedforward: b, feedback: a))
                let src = formulaSource("src", channels: 2) { c, n in c == 0 ? x0[Int(n)] : x1[Int(n)] }
                let g = try startedGraph([src, filter], "src -> iir -> out", slice: slice)
                return renderFrames(g, frames: frames, channels: 2, slices: pattern)
            }
            let y = try render(slice: 512, pattern: [512])
            for (c, x) in [x0, x1].enumerated() {
                let ref = try scipy(b: b, a: a, x: x, frequencies: frequencies)
                let e = SignalMeasurement.worstError(y[c]) { ref.y[$0] }
                XCTAssertLessThan(e.error, 1e-6, "b \(b) a \(a) channel \(c) at \(e.at)")
                print("iirFilter order \(max(a.count, b.count) - 1) channel \(c): worst error against lfilter \(e.error)")
                let response = IIRFilterNode.frequencyResponse(.init(feedforward: b, feedback: a), frequencies: frequencies, sampleRate: sr)
                for k in frequencies.indices {
                    XCTAssertEqual(response.magnitude[k], ref.magnitude[k], accuracy: 1e-12 * max(1, ref.magnitude[k]))
                    if ref.magnitude[k] > 1e-9 {   // phases compared on the circle (±π are one angle)
                        let d = remainder(response.phase[k] - ref.phase[k], 2 * Double.pi)
                        XCTAssertEqual(d, 0, accuracy: 1e-9, "phase at \(frequencies[k]) Hz")
                    }
                }
            }
            XCTAssertEqual(y, try render(slice: 256, pattern: [1, 256, 31, 100]))
        }
    }

    func testResponseOutsideZeroToNyquistIsNaN() {
        let r = IIRFilterNode.frequencyResponse(.init(feedforward: [1, 1], feedback: [1]), frequencies: [-1, 24000.5, 0], sampleRate: 48000)
        XCTAssertTrue(r.magnitude[0].isNaN && r.phase[0].isNaN && r.magnitude[1].isNaN)
        XCTAssertEqual(r.magnitude[2], 2)
    }

    func testTheSpecsInvalidCoefficientsAreRefused() {
        XCTAssertThrowsError(try IIRFilterNode(id: "f", options: .init(feedforward: [0, 0], feedback: [1])))
        XCTAssertThrowsError(try IIRFilterNode(id: "f", options: .init(feedforward: [1], feedback: [0, 1])))
        XCTAssertThrowsError(try IIRFilterNode(id: "f", options: .init(feedforward: Array(repeating: 0.1, count: 21), feedback: [1])))
        XCTAssertThrowsError(try IIRFilterNode(id: "f", options: .init(feedforward: [1], feedback: [])))
    }

    /// A NaN in the input clears the state: the output is finite again once it has passed.
    func testANaNDoesNotSilenceTheFilterForGood() throws {
        let filter = try IIRFilterNode(id: "iir", options: .init(feedforward: [0.1], feedback: [1, -0.9]))
        let src = formulaSource("src", channels: 1) { _, n in n == 100 ? .nan : 0.5 }
        let g = try startedGraph([src, filter], "src -> iir -> out", slice: 256)
        let y = renderFrames(g, frames: 1024, channels: 1)[0]
        XCTAssertTrue(y[600...].allSatisfy { $0.isFinite && $0 > 0 })
    }
}
