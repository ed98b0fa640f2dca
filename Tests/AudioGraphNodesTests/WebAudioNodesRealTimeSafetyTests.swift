// Proves the gain, matrixMixer, stereoPanner, constantSource, iirFilter, channelSplitter, channelMerger custom/detuned oscillator, bufferSource and audio-into-parameter render paths allocate nothing and take no lock.
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
            case 1100: buffer.transport.start(when: 0, offset: 0.02, duration: 0.3)   // a restart and a stop while rendering
            case 1300: buffer.transport.stop(when: 0)
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

    /// A matrix mixer (stereo + mono in, stereo + mono out) with automated crosspoints, an
    /// input-volume ramp, a master step, an LFO into a crosspoint and an input bus going silent and
    /// back: 1200 slices without allocation or lock.
    func testMatrixMixerRenderAllocatesNothingAndTakesNoLock() throws {
        let mx = try MatrixMixerNode(id: "mx", sampleRate: 48000, options: .init(inputs: [2, 1], outputs: [2, 1]))
        for i in 0..<3 { for o in 0..<3 { try mx.setParameter("crosspoint.\(i).\(o)", Double(i + o) * 0.1 - 0.2) } }
        try mx.setAutomation(try AutomationTimeline(events: [.setValue(value: 0, time: 0), .linearRamp(value: 1, time: 2)], defaultValue: 0), for: "crosspoint.2.0")
        try mx.setAutomation(try AutomationTimeline(events: [.setValue(value: 1, time: 0), .linearRamp(value: 0.2, time: 3)], defaultValue: 1), for: "inputChannel.1.volume")
        let stereo = formulaSource("st", channels: 2) { c, n in Float(c + 1) * 0.2 * Float(sin(Double(n) * 0.01)) }
        let mono = formulaSource("mo", channels: 1) { _, n in 0.3 * Float(sin(Double(n) * 0.003)) }
        let lfo = OscillatorNode(id: "lfo", sampleRate: 48000, properties: OscillatorProperties(channels: 1))
        try lfo.setParameter("frequency", 3)
        let merge = try ChannelMergerNode(id: "m", inputs: 3)
        let g = try startedGraph([stereo, mono, mx, lfo, merge], "st -> mx:0; mo -> mx:1; mx:0 -> m:0; mx:1 -> m:2; m -> out", slice: 256) { g in
            try g.connect("lfo", to: "mx", parameter: "crosspoint.0.2")
        }
        for _ in 0..<8 { _ = g.render(frameCount: 256) }
        var counts = RealTimeScaffold.Counts(), audible = 0
        for i in 0..<1200 {
            switch i {
            case 300: try mx.setParameter("volume", 0.5)
            case 500: try mx.setParameter("outputChannel.2.volume", 2, rampFrames: 6000)
            case 700:
                g.enqueue(.disconnect(destination: "mx", destinationBus: 1))
                try g.update(waitUntilApplied: false)
            case 900:
                g.enqueue(.connect(source: "mo", sourceBus: 0, destination: "mx", destinationBus: 1))
                try g.update(waitUntilApplied: false)
            default: break
            }
            let (r, c) = RealTimeScaffold.count { g.render(frameCount: 256) }
            counts += c
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertNil(counts.violation)
        XCTAssertEqual(audible, 1200)
    }
}
