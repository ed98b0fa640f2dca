// Proves the environment's per-input rate (VariableRateInputAdapter) renders without allocating or locking while the rates change.
import AudioGraphTesting
import Foundation
import XCTest

@testable import AudioGraphCore
@testable import AudioGraphNodes

#if canImport(Glibc)
import Glibc
#endif

final class VariableRateInputAdapterRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        if RealTimeScaffold.isCounting {
            XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
        }
    }

    /// An environment with `variableRate` (HRTF and reverb): an oscillator, a 44.1 kHz source
    /// (converted, then varied) and a stereo one, 3000 slices rendered on the scaffold's
    /// render thread while this thread sets every input's `rate` (0.5...2: the adapters switch
    /// to their own timeline on the render thread), moves a source and disconnects and
    /// reconnects an input (a new adapter, started on the render thread). Nothing allocated,
    /// freed, locked or waited on.
    func testRatesChangingWhileRenderingAllocateNothingAndTakeNoLock() throws {
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let osc = OscillatorNode(id: "osc", sampleRate: 48000)
        let slow = formulaSource("slow", channels: 1, sampleRate: 44100) { _, n in Float(0.3 * sin(Double(n) * 0.05)) }
        let stereo = formulaSource("stereo", channels: 2) { c, n in Float(0.3 * sin(Double(n) * (0.02 + 0.01 * Double(c)))) }
        let env = EnvironmentNode(id: "env", sampleRate: 48000, inputBusCount: 3, properties: EnvironmentProperties(
            renderingAlgorithm: .hrtf, reverb: ReverbSettings(enabled: true, preset: .mediumHall, level: -6), variableRate: true))
        for n in [osc, slow, stereo, env, GenericOutputNode(id: "out")] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("osc", to: "env", inputBus: 0)
        try graph.connect("slow", to: "env", inputBus: 1)
        try graph.connect("stereo", to: "env", inputBus: 2)
        try graph.connect("env", to: "out")
        try env.setParameter("input.1.mode", Double(EnvironmentNode.InputMode.equalPower.rawValue))
        try env.setParameter("input.1.reverbBlend", 0.5)
        try graph.initialize()
        try graph.start()

        var connected = true
        let run = try RealTimeScaffold.runRenderThread(warmUp: {
            for _ in 0..<64 { _ = graph.render(frameCount: 256) }
        }, render: {
            var audible = 0
            for _ in 0..<3000 { if let r = graph.render(frameCount: 256), !r.isSilent { audible += 1 } }
            return audible
        }, whileRendering: { step in
            let phase = Double(step % 100) / 100
            try env.setParameter("input.0.rate", 0.5 + 1.5 * phase)
            try env.setParameter("input.1.rate", 2 - 1.5 * phase, rampFrames: 300)
            try env.setParameter("input.2.rate", step % 3 == 0 ? 1 : 0.75)
            try env.setParameter("input.0.x", sin(Double(step) / 10))
            if step % 7 == 0 {
                graph.enqueue(connected ? .disconnect(destination: "env", destinationBus: 1)
                                        : .connect(source: "slow", sourceBus: 0, destination: "env", destinationBus: 1))
                connected.toggle()
                try graph.update(waitUntilApplied: false)
            }
            usleep(300)
        })
        graph.stop()
        graph.collectRetiredPlans()
        print("real-time safety (environment rates): 3000 slices, \(run.steps) control rounds; render thread: \(run.counts)")
        XCTAssertNil(run.counts.violation)
        XCTAssertGreaterThan(run.result, 2900)
        XCTAssertGreaterThan(run.steps, 10)
    }
}
