// Tests of MatrixMixerNode (AUMatrixMixer's mixing) against numpy's per-frame matrix multiply (scripts/reference/matrix_mixer_reference.py).
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class MatrixMixerNodeTests: XCTestCase {
    let sr = 48000.0
    let frames = 4800

    /// Input channel `c` (0...2) at frame `n`: three different sines.
    @Sendable static func input(_ c: Int, _ n: Int64) -> Float {
        Float(0.7 * sin(Double(n) * [0.011, 0.029, 0.047][c] + Double(c)))
    }

    /// The crosspoint gains set as constants (input channel major), and the automation.
    static let crosspoints: [[Double]] = [[0.5, -0.25, 1.5], [0.75, 1, -1], [0.1, 0.9, 0.3]]
    static let automation: [String: [(kind: String, value: Double, time: Double)]] = [
        "crosspoint.0.1": [("set", 0.2, 0), ("linear", -0.7, 0.05)],
        "crosspoint.2.2": [("set", 0, 0), ("set", 1.25, 0.03)],
        "inputChannel.2.volume": [("set", 1, 0), ("linear", 0.3, 0.08)],
        "volume": [("set", 1, 0.02), ("linear", 2, 0.06)],
    ]
    static let constants: [String: Double] = ["outputChannel.0.volume": 0.5, "outputChannel.2.volume": 1.5]

    private func numpy() throws -> [[Double]] {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        var parameters: [String: Double] = Self.constants
        for i in 0..<3 { for o in 0..<3 { parameters["crosspoint.\(i).\(o)"] = Self.crosspoints[i][o] } }
        let spec: [String: Any] = [
            "rate": sr, "frames": frames, "inputs": 3, "outputs": 3, "parameters": parameters,
            "automation": Self.automation.mapValues { $0.map { [$0.kind, $0.value, $0.time] as [Any] } },
        ]
        let specPath = dir.appendingPathComponent("spec.json"), inputPath = dir.appendingPathComponent("x.f32")
        try JSONSerialization.data(withJSONObject: spec).write(to: specPath)
        let x = (0..<3).flatMap { c in (0..<frames).map { Self.input(c, Int64($0)) } }
        try x.withUnsafeBytes { Data($0) }.write(to: inputPath)
        let y = try ReferenceScript.run("matrix_mixer_reference.py", arguments: [specPath.path, inputPath.path]).doubles
        XCTAssertEqual(y.count, 3 * frames)
        return (0..<3).map { Array(y[$0 * frames..<($0 + 1) * frames]) }
    }

    /// A mixer of a stereo and a mono input bus into a stereo and a mono output bus, its constants
    /// and automation set.
    private func mixer() throws -> MatrixMixerNode {
        let mx = try MatrixMixerNode(id: "mx", sampleRate: sr, options: .init(inputs: [2, 1], outputs: [2, 1]))
        for i in 0..<3 { for o in 0..<3 { try mx.setParameter(MatrixMixerNode.crosspointAddress(input: i, output: o).description, Self.crosspoints[i][o]) } }
        for (address, value) in Self.constants { try mx.setParameter(address, value) }
        for (address, events) in Self.automation {
            let e: [AutomationEvent] = events.map { $0.kind == "set" ? .setValue(value: $0.value, time: $0.time) : .linearRamp(value: $0.value, time: $0.time) }
            try mx.setAutomation(try AutomationTimeline(events: e, defaultValue: address.hasSuffix("volume") ? 1 : 0), for: address)
        }
        return mx
    }

    /// Output channel `channel` (0, 1: bus 0; 2: bus 1) rendered in `pattern` slices.
    private func render(outputBus: Int, slices pattern: [Int]) throws -> [[Float]] {
        let stereo = formulaSource("st", channels: 2) { c, n in Self.input(c, n) }
        let mono = formulaSource("mo", channels: 1) { _, n in Self.input(2, n) }
        let g = try startedGraph([stereo, mono, try mixer()], "st -> mx:0; mo -> mx:1; mx:\(outputBus) -> out", slice: 512)
        return renderFrames(g, frames: frames, channels: outputBus == 0 ? 2 : 1, slices: pattern)
    }

    /// Constant and automated crosspoints, an automated input volume, output volumes and a master
    /// ramp: every output channel within 1e-6 of numpy's matrix multiply per frame, and the same
    /// for any slicing.
    func testMatchesNumpysMatrixMultiplyUnderAutomation() throws {
        let ref = try numpy()
        let y = try render(outputBus: 0, slices: [512]) + render(outputBus: 1, slices: [512])
        var worst = 0.0
        for o in 0..<3 {
            let e = SignalMeasurement.worstError(y[o]) { ref[o][$0] }
            XCTAssertLessThan(e.error, 1e-6, "output channel \(o) at \(e.at)")
            worst = max(worst, e.error)
        }
        print("matrixMixer: worst error against numpy \(worst)")
        let sliced = try render(outputBus: 0, slices: [1, 128, 45, 7]) + render(outputBus: 1, slices: [333, 2, 64])
        XCTAssertTrue(y == sliced, "slicing changed the output")
    }

    /// Channels are numbered across the buses: input channel 2 is the mono bus's, output channel 2
    /// the second output bus's; an unconnected bus contributes nothing and an unreached output is silent.
    func testChannelsAreNumberedAcrossBuses() throws {
        let mx = try MatrixMixerNode(id: "mx", sampleRate: sr, options: .init(inputs: [2, 1], outputs: [2, 1]))
        try mx.setParameter("crosspoint.2.0", 0.5)     // mono input -> left of output bus 0
        try mx.setParameter("crosspoint.0.2", 2)       // left input -> output bus 1 (unconnected input bus 0)
        let mono = formulaSource("mo", channels: 1) { _, _ in 0.25 }
        let g = try startedGraph([mono, mx], "mo -> mx:1; mx:0 -> out", slice: 64)
        let y = renderFrames(g, frames: 64, channels: 2)
        XCTAssertEqual(y[0][10], 0.125)
        XCTAssertEqual(y[1][10], 0)
        XCTAssertEqual(mx.outputFormats.map(\.channelCount), [2, 1])
        XCTAssertEqual(mx.parameters.count, 1 + 3 + 3 + 9)
    }

    func testBadBusesAndMismatchedInputsAreRefused() throws {
        XCTAssertThrowsError(try MatrixMixerNode(id: "mx", sampleRate: sr, options: .init(inputs: [], outputs: [2])))
        XCTAssertThrowsError(try MatrixMixerNode(id: "mx", sampleRate: sr, options: .init(inputs: [2], outputs: [40, 40])))
        XCTAssertThrowsError(try MatrixMixerNode(id: "mx", sampleRate: sr, options: .init(inputs: [0], outputs: [2])))
        let mx = try MatrixMixerNode(id: "mx", sampleRate: sr, options: .init(inputs: [1], outputs: [2]))
        let stereo = formulaSource("st", channels: 2) { _, _ in 0 }
        XCTAssertThrowsError(try startedGraph([stereo, mx], "st -> mx; mx -> out")) { error in
            XCTAssertTrue("\(error)".contains("input bus 0 has 1 channel(s); what is connected has 2"), "\(error)")
        }
    }
}
