// Proves the compressor, limiter, convolver and waveshaper render paths allocate nothing and take no lock.
import AudioGraphRealtime
import AudioGraphCore
import CAllocationCounter
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class EffectsRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(ag_counter_is_sanitized() != 0, "allocations are not counted under sanitizers")
        XCTAssertEqual(ag_counter_is_active(), 1, "the malloc interposer is not linked into the test bundle")
    }

    /// Renders `slices` slices of `g` (sizes cycling through `sizes`) with only the render calls
    /// tracked, calling `between(i)` before slice i; returns allocations and locks counted.
    func trackedRender(_ g: AudioGraph, slices: Int, sizes: [Int], between: (Int) throws -> Void) rethrows
        -> (allocations: UInt64, locks: UInt64, audible: Int, firstBad: Int?) {
        var allocations: UInt64 = 0, locks: UInt64 = 0, audible = 0
        var firstBad: Int?
        let savedTrapping = RenderThread.trapsOnViolation
        RenderThread.trapsOnViolation = false
        defer { RenderThread.trapsOnViolation = savedTrapping }
        RenderThread.resetLockViolations()
        for i in 0..<slices {
            try between(i)
            ag_counter_reset()
            RenderThread.markCurrentThread(true)
            ag_counter_track_this_thread(1)
            let r = g.render(frameCount: sizes[i % sizes.count])
            ag_counter_track_this_thread(0)
            RenderThread.markCurrentThread(false)
            if firstBad == nil && ag_counter_allocations() + ag_counter_locks() > 0 { firstBad = i }
            allocations += ag_counter_allocations()
            locks += ag_counter_locks()
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        return (allocations, locks, audible, firstBad)
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
        XCTAssertEqual(result.allocations, 0, "first at slice \(result.firstBad ?? -1)")
        XCTAssertEqual(result.locks, 0, "first at slice \(result.firstBad ?? -1)")
        XCTAssertEqual(RenderThread.lockViolations, 0, "the render path took a ControlLock")
        XCTAssertEqual(result.audible, 1500)
    }
}
