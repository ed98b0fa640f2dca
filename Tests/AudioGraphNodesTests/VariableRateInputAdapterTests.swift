// Tests of the environment's per-input rate (VariableRateInputAdapter) against a varispeed before the input and the position formula.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

/// A formula source that says it is live (as the input node does): nothing may read it ahead.
final class LiveFormulaNode: GraphNode, @unchecked Sendable {
    let signal: @Sendable (Int64) -> Float
    init(id: String, _ signal: @escaping @Sendable (Int64) -> Float) {
        self.signal = signal
        super.init(id: id, typeName: "liveFormula", inputBusCount: 0, outputBusCount: 1, parameters: [],
                   declaredFormat: PartialStreamFormat(channelCount: 1))
    }
    override var isLiveSource: Bool { true }
    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        LiveFormulaKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

final class LiveFormulaKernel: NodeKernel, @unchecked Sendable {
    let signal: @Sendable (Int64) -> Float
    init(node: LiveFormulaNode, maximumFramesPerSlice: Int) {
        signal = node.signal
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: [])
    }
    override func render(context: RenderContext, inputs: RenderInputs) {
        let p = outputs[0].channel(0)
        for i in 0..<context.frameCount { p[i] = signal(context.sampleTime + Int64(i)) }
        outputIsSilent[0] = false
    }
}

final class VariableRateInputAdapterTests: XCTestCase {
    let sr = 48000.0

    /// The two renders are sample for sample the same (reported as the first difference).
    func assertSame(_ a: [[Float]], _ b: [[Float]], _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.map(\.count), b.map(\.count), message, file: file, line: line)
        for c in 0..<min(a.count, b.count) {
            if let i = (0..<min(a[c].count, b[c].count)).first(where: { a[c][$0] != b[c][$0] }) {
                let worst = zip(a[c], b[c]).map { abs($0 - $1) }.max()!
                XCTFail("\(message): channel \(c) differs from frame \(i) (\(a[c][i]) against \(b[c][i])), by up to \(worst)",
                        file: file, line: line)
            }
        }
    }

    /// 0.5·sin(2π·1000·n/sr) + 0.25·sin(2π·2750·n/sr + 1): two tones, so a resampling error shows.
    static func signal(_ n: Int64) -> Float {
        let t = Double(n) / 48000
        return Float(0.5 * sin(2 * Double.pi * 1000 * t) + 0.25 * sin(2 * Double.pi * 2750 * t + 1))
    }

    func source(_ id: String = "src") -> RenderCallbackNode {
        formulaSource(id, channels: 1) { _, n in Self.signal(n) }
    }

    /// An environment (HRTF set loaded, so both modes are available) with one input at
    /// (1, 0, -1), rendered in `mode`.
    func environment(variableRate: Bool, mode: EnvironmentNode.InputMode, rate: Double = 1) throws -> EnvironmentNode {
        let env = EnvironmentNode(id: "env", sampleRate: sr, inputBusCount: 1,
                                  properties: EnvironmentProperties(renderingAlgorithm: .hrtf, variableRate: variableRate))
        try env.setParameter("input.0.x", 1)
        try env.setParameter("input.0.z", -1)
        try env.setParameter("input.0.mode", Double(mode.rawValue))
        try env.setParameter("input.0.rate", rate)
        return env
    }

    func varispeed(rate: Double) throws -> VarispeedNode {
        let v = VarispeedNode(id: "vs", sampleRate: sr)
        try v.setParameter("rate", rate)
        return v
    }

    /// Rate 2 and 0.5, equal power and HRTF: the environment's own rate gives the samples a
    /// varispeed at that rate before an environment at rate 1 gives (the same resampler, the
    /// same input frames).
    func testRateMatchesAVarispeedBeforeTheInput() throws {
        for mode in [EnvironmentNode.InputMode.equalPower, .hrtf] {
            for rate in [2.0, 0.5] {
                let g = try startedGraph([source(), try environment(variableRate: true, mode: mode, rate: rate)], "src -> env -> out")
                let y = renderFrames(g, frames: 20000, channels: 2)
                let reference = try startedGraph([source(), try varispeed(rate: rate), try environment(variableRate: false, mode: mode)],
                                                 "src -> vs -> env -> out")
                let want = renderFrames(reference, frames: 20000, channels: 2)
                assertSame(y, want, "\(mode) at rate \(rate)")
                // And it is not the unchanged source.
                let plain = renderFrames(try startedGraph([source(), try environment(variableRate: false, mode: mode)], "src -> env -> out"),
                                         frames: 20000, channels: 2)
                XCTAssertGreaterThan(zip(y[0], plain[0]).map { abs($0 - $1) }.max()!, 0.1)
            }
        }
    }

    /// A 1000 Hz tone straight ahead (equal power: both channels cos(π/4)·x, distance 1):
    /// y[n] = cos(π/4)·0.5·sin(2π·1000·rate·n/sr), so the tone measures 1000·rate Hz.
    func testToneFrequencyIsTheRateTimesTheSources() throws {
        for rate in [2.0, 0.5, 1.5] {
            let tone = formulaSource("src", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000)) }
            let env = try environment(variableRate: true, mode: .equalPower, rate: rate)
            try env.setParameter("input.0.x", 0)
            let y = renderFrames(try startedGraph([tone, env], "src -> env -> out"), frames: 24000, channels: 2)
            let body = Array(y[0][300..<23700])
            let fit = toneFit(body, frequency: 1000 * rate, sampleRate: sr)
            XCTAssertEqual(fit.amplitude, 0.5 * cos(Double.pi / 4), accuracy: 1e-3, "rate \(rate)")
            XCTAssertLessThan(fit.residualRMS, 1e-4, "rate \(rate)")
            XCTAssertLessThan(ToneFit(body, sampleRate: sr, frequencies: [1000, 1000 * rate]).tones[0].amplitude, 1e-5)
            let e = SignalMeasurement.worstError(y[1], 300..<23700) {
                cos(Double.pi / 4) * 0.5 * sin(2 * Double.pi * 1000 * rate * Double($0) / 48000)
            }
            XCTAssertLessThan(e.error, 1e-4, "rate \(rate) at frame \(e.at)")
        }
    }

    /// Rate 1: the input passes on the clock, bit for bit what an environment without
    /// `variableRate` renders.
    func testRateOneIsTheEnvironmentWithoutVariableRate() throws {
        for mode in [EnvironmentNode.InputMode.equalPower, .hrtf] {
            let y = renderFrames(try startedGraph([source(), try environment(variableRate: true, mode: mode)], "src -> env -> out", slice: 100),
                                 frames: 10000, channels: 2)
            let want = renderFrames(try startedGraph([source(), try environment(variableRate: false, mode: mode)], "src -> env -> out", slice: 100),
                                    frames: 10000, channels: 2)
            assertSame(y, want, "\(mode)")
        }
    }

    /// Automation (a step at frame 10007 from 1 to 1.5, then a ramp to 0.6) and a parameter set
    /// between two renders: the same samples as a varispeed given the same changes, and the
    /// step follows t_n = n up to F, then F + 1.5 (n − F) (no jump where the input starts being
    /// read ahead: its history is the frames already played).
    func testRateChangedWhileRunningMatchesTheVarispeedAndTheFormula() throws {
        let f = 10007
        let automation = try AutomationTimeline(events: [.setValue(value: 1.5, time: Double(f) / sr),
                                                         .setValue(value: 1.5, time: 0.3), .linearRamp(value: 0.6, time: 0.4)],
                                                defaultValue: 1)
        let env = try environment(variableRate: true, mode: .equalPower)
        try env.setParameter("input.0.x", 0)
        try env.setAutomation(automation, for: "input.0.rate")
        let g = try startedGraph([source(), env], "src -> env -> out", slice: 100)
        var y = renderFrames(g, frames: 24000, channels: 2)
        let vs = try varispeed(rate: 1)
        try vs.setAutomation(automation, for: "rate")
        let ref = try environment(variableRate: false, mode: .equalPower)
        try ref.setParameter("input.0.x", 0)
        let r = try startedGraph([source(), vs, ref], "src -> vs -> env -> out", slice: 100)
        var want = renderFrames(r, frames: 24000, channels: 2)
        assertSame(y, want)
        func t(_ n: Int) -> Double { n <= f ? Double(n) : Double(f) + 1.5 * Double(n - f) }
        let e = SignalMeasurement.worstError(y[0], 0..<14000) { cos(Double.pi / 4) * Self.exact(t($0)) }
        XCTAssertLessThan(e.error, 1e-4, "at frame \(e.at)")

        // A set while running (the engine API's path): from the next slice.
        try env.setAutomation(nil, for: "input.0.rate")
        try vs.setAutomation(nil, for: "rate")
        try env.setParameter("input.0.rate", 2)
        try vs.setParameter("rate", 2)
        y = renderFrames(g, frames: 5000, channels: 2)
        want = renderFrames(r, frames: 5000, channels: 2)
        assertSame(y, want)
        XCTAssertGreaterThan(y[0].map { abs($0) }.max()!, 0.3)
    }

    /// The source's formula at a fractional position (what the resampler reconstructs).
    static func exact(_ t: Double) -> Double {
        0.5 * sin(2 * Double.pi * 1000 * t / 48000) + 0.25 * sin(2 * Double.pi * 2750 * t / 48000 + 1)
    }

    /// Any slicing gives the same samples (automation and a steady rate, both modes).
    func testSliceSizesGiveIdenticalOutput() throws {
        func render(_ slices: [Int], mode: EnvironmentNode.InputMode) throws -> [[Float]] {
            let env = try environment(variableRate: true, mode: mode, rate: 1)
            try env.setAutomation(try AutomationTimeline(events: [.setValue(value: 0.7, time: 0.05), .linearRamp(value: 1.9, time: 0.3),
                                                                  .setValue(value: 1, time: 0.35)], defaultValue: 1),
                                  for: "input.0.rate")
            let g = try startedGraph([source(), env], "src -> env -> out", slice: 512)
            return renderFrames(g, frames: 20000, channels: 2, slices: slices)
        }
        for mode in [EnvironmentNode.InputMode.equalPower, .hrtf] {
            let reference = try render([512], mode: mode)
            assertSame(try render([64], mode: mode), reference)
            assertSame(try render([100, 37, 300], mode: mode), reference)
            XCTAssertGreaterThan(reference[0].map { abs($0) }.max()!, 0.1)
        }
    }

    /// An input at another sample rate is converted first, then played at its rate: the same
    /// samples as a varispeed after the same conversion (an environment at rate 1 fed by it).
    func testInputAtAnotherSampleRate() throws {
        let src = formulaSource("src", channels: 1, sampleRate: 44100) { _, n in Float(0.5 * sin(2 * Double.pi * 800 * Double(n) / 44100)) }
        let y = renderFrames(try startedGraph([src, try environment(variableRate: true, mode: .equalPower, rate: 2)], "src -> env -> out"),
                             frames: 12000, channels: 2)
        // At (1, 0, -1): the right channel carries the tone, at 1600 Hz.
        // Equal power at azimuth 45°: sin(3π/8); inverse distance at √2: 1/√2.
        let fit = toneFit(Array(y[1][1000..<11000]), frequency: 1600, sampleRate: sr)
        XCTAssertEqual(fit.amplitude, 0.5 * sin(3 * Double.pi / 8) / 2.0.squareRoot(), accuracy: 1e-3)
        XCTAssertLessThan(fit.residualRMS, 1e-4)
    }

    /// A live source cannot be read ahead: its input keeps rate 1 (the environment renders it as
    /// without `variableRate`), directly or through a mixer; a varispeed on it is refused as before.
    func testLiveInputStaysAtRateOne() throws {
        for path in ["live -> env -> out", "live -> mix -> env -> out"] {
            func nodes(_ variable: Bool) throws -> [GraphNode] {
                var n: [GraphNode] = [LiveFormulaNode(id: "live") { Self.signal($0) },
                                      try environment(variableRate: variable, mode: .equalPower, rate: variable ? 2 : 1)]
                if path.contains("mix") { n.append(MixerNode(id: "mix", sampleRate: sr, inputBusCount: 1)) }
                return n
            }
            let y = renderFrames(try startedGraph(try nodes(true), path), frames: 5000, channels: 2)
            let want = renderFrames(try startedGraph(try nodes(false), path), frames: 5000, channels: 2)
            assertSame(y, want, path)
            XCTAssertGreaterThan(y[0].map { abs($0) }.max()!, 0.1)
        }
        XCTAssertThrowsError(try startedGraph([LiveFormulaNode(id: "live") { Self.signal($0) }, try varispeed(rate: 2)], "live -> vs -> out"))
    }

    /// The per-source rate buffer is made once and never swapped (adapters made earlier keep
    /// theirs): later, longer slices within it get the same buffer; longer than it, a clear error.
    func testTheSharedRateBufferIsNeverReplaced() throws {
        let env = try environment(variableRate: true, mode: .equalPower)
        let first = try env.rates(maximumFrames: 512)
        XCTAssertGreaterThanOrEqual(first.capacity, EnvironmentNode.sharedRateCapacity)
        XCTAssertTrue(try env.rates(maximumFrames: EnvironmentNode.sharedRateCapacity) === first)
        XCTAssertThrowsError(try env.rates(maximumFrames: EnvironmentNode.sharedRateCapacity + 1)) { error in
            XCTAssertTrue("\(error)".contains("env"), "\(error)")
        }
        XCTAssertTrue(try env.rates(maximumFrames: 128) === first)
    }
}
