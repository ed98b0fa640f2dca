// Proves the compressor, limiter, convolver and waveshaper render paths allocate nothing and take no lock.
import AudioGraphRealtime
@testable import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class EffectsRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
    }

    /// Renders `slices` slices of `g` (sizes cycling through `sizes`) with only the render calls
    /// counted by the real-time scaffold, calling `between(i)` before slice i.
    func trackedRender(_ g: AudioGraph, slices: Int, sizes: [Int], between: (Int) throws -> Void) rethrows
        -> (counts: RealTimeScaffold.Counts, audible: Int, firstBad: Int?) {
        var counts = RealTimeScaffold.Counts(), audible = 0
        var firstBad: Int?
        for i in 0..<slices {
            try between(i)
            let (r, c) = RealTimeScaffold.count { g.render(frameCount: sizes[i % sizes.count]) }
            if firstBad == nil && c.violation != nil { firstBad = i }
            counts += c
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        return (counts, audible, firstBad)
    }

    /// noise -> convolver (1.5 s stereo response: every FFT level) -> waveShaper (2x, then 4x and a
    /// new curve) -> compressor (automated
    /// threshold) -> limiter (+12 dB pre-gain) -> out: 1500 slices of mixed sizes, parameter
    /// steps and ramps in between.
    func testDynamicsAndConvolutionAllocateNothingAndTakeNoLock() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ir = dir.appendingPathComponent("ir.wav")
        try WAVFile(sampleRate: 48000, channels: ConvolverNodeTests.response(channels: 2, frames: 72000)).write(to: ir)
        let src = formulaSource("src", channels: 2) { c, n in ConvolverNodeTests.noise(UInt64(c), Int(n)) * 0.3 }
        let conv = try ConvolverNode(id: "conv", sampleRate: 48000, properties: ConvolverProperties(file: ir.path))
        let comp = DynamicsCompressorNode(id: "comp", sampleRate: 48000)
        try comp.setAutomation(try AutomationTimeline(events: [
            .setValue(value: -40, time: 0.5), .linearRamp(value: -10, time: 3)], defaultValue: -24), for: "threshold")
        let lim = PeakLimiterNode(id: "lim", sampleRate: 48000)
        try lim.setParameter("preGain", 12)
        let ws = try WaveShaperNode(id: "ws", properties: WaveShaperProperties(curve: [-1, -0.5, 0.8, 1], oversample: .twice))
        let g = try startedGraph([src, conv, ws, comp, lim], "src -> conv -> ws -> comp -> lim -> out", slice: 512)
        for _ in 0..<8 { _ = g.render(frameCount: 512) }
        let result = try trackedRender(g, slices: 1500, sizes: [512, 128, 37, 500]) { i in
            switch i {
            case 200: try comp.setParameter("ratio", 4)
            case 400: try comp.setParameter("attack", 0.05, rampFrames: 4800)
            case 600: try lim.setParameter("attackTime", 0.002)
            case 800: try lim.setParameter("ceiling", -6, rampFrames: 9600)
            case 1000:
                try ws.setProperty("oversample", "4x")
                try ws.setProperty("curve", (0..<999).map { Float(tanh(Double($0) / 100 - 5)) })
                try g.update(waitUntilApplied: false)
            default: break
            }
        }
        XCTAssertNil(result.counts.violation, "first at slice \(result.firstBad ?? -1)")
        XCTAssertEqual(result.audible, 1500)
    }

    /// The convolver in an offline render on two threads (the second output on the kernel's
    /// helper thread, which counts its own allocations and locks from its start, as render
    /// workers do): 1500 slices of mixed sizes, neither the render thread nor the helper
    /// allocates or locks, and the helper computed slices (the others the render thread).
    func testConvolverHelperThreadAllocatesNothingAndTakesNoLock() throws {
        try RealTimeScaffold.countingHelperThreads(helpersRunEveryJob: false) { try checkConvolverHelperThread() }
    }

    func checkConvolverHelperThread() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ir = dir.appendingPathComponent("ir.wav")
        try WAVFile(sampleRate: 48000, channels: ConvolverNodeTests.response(channels: 4, frames: 72000)).write(to: ir)
        let src = formulaSource("src", channels: 2) { c, n in ConvolverNodeTests.noise(UInt64(c), Int(n)) * 0.3 }
        let conv = try ConvolverNode(id: "conv", sampleRate: 48000, properties: ConvolverProperties(file: ir.path))
        let g = try startedGraph([src, conv], "src -> conv -> out", slice: 512) { try $0.setRenderThreadCount(2) }
        let kernel = try XCTUnwrap(conv.kernel as? ConvolverKernel)
        for _ in 0..<8 { _ = g.render(frameCount: 512) }
        let before = kernel.helperJobsRun
        let result = trackedRender(g, slices: 1500, sizes: [512, 128, 37, 500]) { _ in }
        XCTAssertNil(result.counts.violation, "first at slice \(result.firstBad ?? -1)")
        XCTAssertEqual(result.audible, 1500)
        XCTAssertGreaterThan(kernel.helperJobsRun - before, 0, "the helper computed slices")
        g.stop()
        g.uninitialize()
    }
}
