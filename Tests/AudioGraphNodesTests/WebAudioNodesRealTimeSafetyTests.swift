// Proves the gain, stereoPanner, constantSource, iirFilter, channelSplitter, channelMerger custom/detuned oscillator, bufferSource and audio-into-parameter render paths allocate nothing and take no lock.
import AudioGraphRealtime
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class WebAudioNodesRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
    }

    /// constantSource (automated) -> gain (automated) -> iirFilter -> stereoPanner -> splitter ->
    /// merger (swapped) -> mixer <- 6-channel source -> stereoPanner (down-mix path); 1500 slices
    /// with only the render calls tracked, steps and ramps of gain and pan in between.
    func testRenderAllocatesNothingAndTakesNoLock() throws {
        let c = ConstantSourceNode(id: "c", sampleRate: 48000)
        try c.setAutomation(try AutomationTimeline(events: [.setValue(value: 0.2, time: 0), .linearRamp(value: 0.9, time: 3)], defaultValue: 1), for: "offset")
        let gain = GainNode(id: "g", sampleRate: 48000)
        try gain.setAutomation(try AutomationTimeline(events: [.setValueCurve(values: [1, -1, 0.5], startTime: 1, duration: 2)], defaultValue: 1), for: "gain")
        let iir = try IIRFilterNode(id: "f", options: .init(feedforward: [0.1, 0.2, 0.1], feedback: [1, -0.5, 0.2]))
        let pan = StereoPannerNode(id: "p", sampleRate: 48000)
        let split = try ChannelSplitterNode(id: "s", outputs: 3)
        let merge = try ChannelMergerNode(id: "m", inputs: 2)
        let six = formulaSource("six", channels: 6) { ch, n in Float(ch + 1) * 0.05 * Float(sin(Double(n) * 0.01)) }
        let pan6 = StereoPannerNode(id: "p6", sampleRate: 48000)
        var wave = OscillatorProperties(waveform: .custom)
        wave.real = [0, 0.5, 0.2, 0.1]
        wave.imag = [0, 1, 0, 0.3]
        let osc = OscillatorNode(id: "osc", sampleRate: 48000, properties: wave)
        try osc.setAutomation(try AutomationTimeline(events: [.setValue(value: -1200, time: 0), .linearRamp(value: 2400, time: 3)], defaultValue: 0), for: "detune")
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let file = dir.appendingPathComponent("loop.wav").path
        try TestFiles.writeSoundFile(file, [(0..<4800).map { Float(sin(Double($0) * 0.03)) }], sampleRate: 48000)
        let buffer = try BufferSourceNode(id: "buf", options: .init(file: "loop.wav", path: file, loop: true, loopStart: 0.01, loopEnd: 0.08))
        try buffer.setAutomation(try AutomationTimeline(events: [.setValue(value: 0.7, time: 0), .linearRamp(value: -1.3, time: 4)], defaultValue: 1), for: "playbackRate")
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 4)
        let lfo = OscillatorNode(id: "lfo", sampleRate: 48000, properties: OscillatorProperties(channels: 2))
        try lfo.setParameter("frequency", 4)
        let depth = GainNode(id: "depth", sampleRate: 48000)
        try depth.setParameter("gain", 300)
        let g = try startedGraph([c, gain, iir, pan, split, merge, six, pan6, osc, mixer, lfo, depth, buffer],
                                 "c -> g -> f -> p -> s; s:1 -> m:0; s:0 -> m:1; m -> mix:0; six -> p6 -> mix:1; osc -> mix:2; buf -> mix:3; mix -> out; lfo -> depth",
                                 slice: 256) { g in
            // Audio into parameters: an LFO on the panner's pan and (scaled) on the oscillator's frequency.
            try g.connect("lfo", to: "p", parameter: "pan")
            try g.connect("depth", to: "osc", parameter: "frequency")
            try g.connect("lfo", to: "buf", parameter: "detune")
        }
        for _ in 0..<8 { _ = g.render(frameCount: 256) }

        var counts = RealTimeScaffold.Counts(), audible = 0
        var firstBad: Int?
        for i in 0..<1500 {
            switch i {
            case 200: try pan.setParameter("pan", -0.7)
            case 400: try pan.setParameter("pan", 0.9, rampFrames: 9000)
            case 600: try pan6.setParameter("pan", 0.4, rampFrames: 3000)
            case 800:
                try osc.setProperty("waveform", "sine")   // a custom oscillator switched while running, and back
                try g.update(waitUntilApplied: false)
            case 900:
                try osc.setProperty("waveform", "custom")
                try g.update(waitUntilApplied: false)
            case 1000:
                g.enqueue(.disconnectParameter(source: "lfo", sourceBus: 0, destination: "p", parameter: "pan"))
                g.enqueue(.connectParameter(source: "lfo", sourceBus: 0, destination: "g", parameter: "gain"))
                try g.update(waitUntilApplied: false)
            default: break
            }
            let (r, c) = RealTimeScaffold.count { g.render(frameCount: 256) }
            if firstBad == nil && c.violation != nil { firstBad = i }
            counts += c
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertNil(counts.violation, "first at slice \(firstBad ?? -1)")
        XCTAssertEqual(audible, 1500)
    }
}
