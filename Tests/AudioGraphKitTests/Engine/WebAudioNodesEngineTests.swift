// The Web Audio node faces (gain, stereo panner, constant source, IIR filter, splitter, merger) through the engine API in manual rendering.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class WebAudioNodesEngineTests: XCTestCase {
    /// constant source (0.5) -> gain (-0.6) -> panner (pan 0.5) -> main mixer: every frame is
    /// the spec's mono panning of -0.3 (the mixer's stereo input at pan 0 passes unchanged).
    func testConstantSourceThroughGainAndPanner() throws {
        let engine = try makeManualEngine()
        let source = AudioConstantSourceNode(), gain = AudioGainNode(), panner = AudioStereoPannerNode()
        XCTAssertEqual(source.offset, 1)
        XCTAssertEqual(gain.gain, 1)
        XCTAssertEqual(panner.pan, 0)
        source.offset = 0.5
        gain.gain = -0.6
        panner.pan = 0.5
        for n in [source, gain, panner] { engine.attach(n) }
        let mono = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!
        engine.connect(source, to: gain, format: mono)
        engine.connect(gain, to: panner, format: mono)
        engine.connect(panner, to: engine.mainMixerNode, format: nil)
        try engine.start()
        XCTAssertEqual(panner.outputFormat(forBus: 0).channelCount, 2)
        let y = try render(engine, frames: 2000)
        let x = Double(Float(0.5) * Float(-0.6)), theta = (0.5 + 1) / 2 * Double.pi / 2
        XCTAssertEqual(Double(y[0][1000]), x * cos(theta), accuracy: 1e-7)
        XCTAssertEqual(Double(y[1][1000]), x * sin(theta), accuracy: 1e-7)
        gain.gain = 2   // while running: the next slice
        let z = try render(engine, frames: 1000)
        XCTAssertEqual(Double(z[1][500]), 1.0 * sin(theta), accuracy: 1e-7)
    }

    /// A two-pole resonator on an impulse-free sine: the engine's output equals the recurrence
    /// written here, and getFrequencyResponse equals |H| computed here.
    func testIIRFilterAndItsFrequencyResponse() throws {
        let b = [0.05, 0.1, 0.05], a = [1.0, -1.6, 0.8]
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 1000)
        let filter = try AudioIIRFilterNode(feedforward: b, feedback: a)
        engine.attach(source)
        engine.attach(filter)
        engine.connect(source, to: filter, format: nil)
        engine.connect(filter, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let y = try render(engine, frames: 4800)
        // The source's samples, taken from the same engine without the filter, filtered here.
        let plain = try makeManualEngine()
        let s2 = makeSineSource(frequency: 1000)
        plain.attach(s2)
        plain.connect(s2, to: plain.mainMixerNode, format: nil)
        try plain.start()
        let x = try render(plain, frames: 4800)[0].map(Double.init)
        var ref = [Double](repeating: 0, count: x.count)
        for n in x.indices {
            var acc = b[0] * x[n]
            if n >= 1 { acc += b[1] * x[n - 1] - a[1] * ref[n - 1] }
            if n >= 2 { acc += b[2] * x[n - 2] - a[2] * ref[n - 2] }
            ref[n] = acc
        }
        XCTAssertLessThan(SignalMeasurement.worstError(y[0]) { ref[$0] }.error, 1e-6)
        var mag = [Float](repeating: 0, count: 3), phase = [Float](repeating: 0, count: 3)
        filter.getFrequencyResponse([1000, -5, 30000], magResponse: &mag, phaseResponse: &phase)
        let w = 2 * Double.pi * 1000 / 48000
        func h(_ c: [Double]) -> (Double, Double) { (c[0] + c[1] * cos(w) + c[2] * cos(2 * w), -(c[1] * sin(w) + c[2] * sin(2 * w))) }
        let (nr, ni) = h(b), (dr, di) = h(a)
        XCTAssertEqual(Double(mag[0]), ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot(), accuracy: 1e-6)
        XCTAssertTrue(mag[1].isNaN && mag[2].isNaN && phase[2].isNaN)
        XCTAssertThrowsError(try AudioIIRFilterNode(feedforward: [0], feedback: [1]))
    }

    /// stereo source -> splitter (2) -> merger (2) with the channels swapped -> main mixer.
    func testSplitterAndMergerSwapTheChannels() throws {
        let engine = try makeManualEngine()
        let source = AudioSourceNode { _, _, frameCount, data in
            let list = UnsafeMutableAudioBufferListPointer(data)
            for (c, buffer) in list.enumerated() {
                let p = buffer.mData!.assumingMemoryBound(to: Float.self)
                for i in 0..<Int(frameCount) { p[i] = c == 0 ? 0.25 : -0.5 }
            }
            return noErr
        }
        let split = AudioChannelSplitterNode(numberOfOutputs: 2), merge = AudioChannelMergerNode(numberOfInputs: 2)
        XCTAssertEqual(split.numberOfOutputs, 2)
        XCTAssertEqual(merge.numberOfInputs, 2)
        for n in [source, split, merge] { engine.attach(n) }
        engine.connect(source, to: split, format: nil)
        engine.connect(split, to: merge, fromBus: 0, toBus: 1, format: nil)
        engine.connect(split, to: merge, fromBus: 1, toBus: 0, format: nil)
        engine.connect(merge, to: engine.mainMixerNode, format: nil)
        try engine.start()
        XCTAssertEqual(split.outputFormat(forBus: 1).channelCount, 1)
        let y = try render(engine, frames: 1000)
        XCTAssertEqual(y[0][500], -0.5)
        XCTAssertEqual(y[1][500], 0.25)
    }

    /// Audio into a parameter through the engine API: a constant source (0.5) through a gain of
    /// 0.5 whose gain parameter takes another constant source (0.25): 0.5 · 0.75; disconnected
    /// while running: 0.5 · 0.5 from the next render on.
    func testConnectAudioToAParameterAndDisconnectWhileRunning() throws {
        let engine = try makeManualEngine()
        let carrier = AudioConstantSourceNode(), modulator = AudioConstantSourceNode(), amp = AudioGainNode()
        carrier.offset = 0.5
        modulator.offset = 0.25
        amp.gain = 0.5
        for n in [carrier, modulator, amp] { engine.attach(n) }
        engine.connect(carrier, to: amp, format: nil)
        engine.connect(amp, to: engine.mainMixerNode, format: nil)
        engine.connect(modulator, to: amp.gainParameter)
        try engine.start()
        XCTAssertEqual(try render(engine, frames: 1000)[0][500], 0.375)
        engine.disconnect(modulator, from: amp.gainParameter)
        XCTAssertEqual(try render(engine, frames: 1000)[0][0], 0.25)
        engine.connect(modulator, to: amp.parameter("gain"))
        XCTAssertEqual(try render(engine, frames: 1000)[0][0], 0.375)
        XCTAssertEqual(engine.editFaultCount, 0)
    }
}
