// Engine-API parameters clamp to their node's table as Audio Units do: any value, running or not, never stops the program.
@testable import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioNodeTests: XCTestCase {
    /// Issue 18's repro: a band frequency above Nyquist on a running 48 kHz engine passed the
    /// unit's own range (10...96000), failed the node's (10...24000) and stopped the program.
    func testABandFrequencyAboveNyquistOnARunningEngineIsClampedToNyquist() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 1000, amplitude: 0.25)
        let eq = AudioUnitEQ(numberOfBands: 1)
        eq.bands[0].bypass = false
        [source, eq].forEach(engine.attach)
        engine.connect(source, to: eq, format: nil)
        engine.connect(eq, to: engine.mainMixerNode, format: nil)
        try engine.start()
        _ = try render(engine, frames: 512)
        eq.bands[0].frequency = 30000
        XCTAssertEqual(eq.bands[0].frequency, 24000, "the eq table's range at 48 kHz: 10...Nyquist")
        eq.bands[0].frequency = 5
        XCTAssertEqual(eq.bands[0].frequency, 10)
        XCTAssertEqual(engine.editFaultCount, 0)
        let out = try render(engine, frames: 4800)
        XCTAssertTrue(out.allSatisfy { $0.allSatisfy(\.isFinite) })
    }

    /// Before `start()` the rate is not known: the value is kept and meets Nyquist when the
    /// engine builds its graph (the getter then says what runs).
    func testABandFrequencyAboveNyquistBeforeStartIsClampedWhenTheGraphIsBuilt() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 1000, amplitude: 0.25)
        let eq = AudioUnitEQ(numberOfBands: 1)
        eq.bands[0].frequency = 30000
        eq.bands[0].bypass = false
        [source, eq].forEach(engine.attach)
        engine.connect(source, to: eq, format: nil)
        engine.connect(eq, to: engine.mainMixerNode, format: nil)
        try engine.start()
        XCTAssertEqual(eq.bands[0].frequency, 24000)
    }

    /// A delay time beyond AVAudioUnitDelay's 0...2 s plays as 2 s: silence for exactly 96000
    /// frames at 48 kHz, then the input (no feedback, all wet), against the formula.
    func testADelayTimeBeyondTwoSecondsDelaysByTwoSeconds() throws {
        let engine = try makeManualEngine(maximum: 4800)
        let source = makeSineSource(frequency: 440)
        let delay = AudioUnitDelay()
        delay.feedback = 0
        delay.wetDryMix = 100
        delay.lowPassCutoff = 24000
        [source, delay].forEach(engine.attach)
        engine.connect(source, to: delay, format: nil)
        engine.connect(delay, to: engine.mainMixerNode, format: nil)
        try engine.start()
        delay.delayTime = 1e30
        XCTAssertEqual(delay.delayTime, 2)
        let out = try render(engine, frames: 97000, piece: 4800)[0]
        XCTAssertEqual(out[..<96000].map(abs).max(), 0)
        for n in 96000..<97000 { XCTAssertEqual(out[n], sineSample(Int64(n - 96000), frequency: 440, rate: 48000), accuracy: 1e-6) }
    }

    /// The values an application might pass: huge, tiny, negative, zero, infinite and NaN.
    static let extremes: [Float] = [.greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1e30, -1e30, 0, -0.0,
                                    .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 1, -1, .infinity, -.infinity, .nan]

    /// Every parameter of the engine API's units, mixers, environment and mixing settings set
    /// to each extreme value, on an engine that is not running and then on a running one. The
    /// program goes on (before, several of these stopped it), each value the API reports lies in
    /// Apple's documented range, and the output stays finite.
    func testEveryEngineParameterTakesAnyValueRunningOrNot() throws {
        let engine = try makeManualEngine(maximum: 1024)
        let source = makeSineSource(frequency: 440, amplitude: 0.25)
        let mono = makeSineSource(frequency: 660, channels: 1, amplitude: 0.25)
        let eq = AudioUnitEQ(numberOfBands: 2)
        let delay = AudioUnitDelay(), reverb = AudioUnitReverb(), varispeed = AudioUnitVarispeed()
        let timePitch = AudioUnitTimePitch(), mixer = AudioMixerNode(), environment = AudioEnvironmentNode()
        for n in [source, mono, eq, delay, reverb, varispeed, timePitch, mixer, environment] { engine.attach(n) }
        engine.connect(source, to: eq, format: nil)
        engine.connect(eq, to: delay, format: nil)
        engine.connect(delay, to: reverb, format: nil)
        engine.connect(reverb, to: varispeed, format: nil)
        engine.connect(varispeed, to: timePitch, format: nil)
        engine.connect(timePitch, to: mixer, format: nil)
        engine.connect(mixer, to: engine.mainMixerNode, format: nil)
        engine.connect(mono, to: environment, format: nil)
        engine.connect(environment, to: engine.mainMixerNode, format: nil)
        environment.reverbParameters.enable = true
        eq.bands.forEach { $0.bypass = false }

        func setEverything(to v: Float) {
            eq.globalGain = v
            for band in eq.bands {
                band.frequency = v
                band.bandwidth = v
                band.gain = v
            }
            delay.delayTime = TimeInterval(v)
            delay.feedback = v
            delay.lowPassCutoff = v
            delay.wetDryMix = v
            reverb.wetDryMix = v
            varispeed.rate = v
            timePitch.rate = v
            timePitch.pitch = v
            mixer.outputVolume = v
            engine.mainMixerNode.outputVolume = v
            for m in [source, mono] as [any AudioMixing] {
                m.volume = v
                m.pan = v
                m.position = AudioMake3DPoint(v, v, v)
                m.obstruction = v
                m.occlusion = v
                m.reverbBlend = v
            }
            environment.listenerPosition = AudioMake3DPoint(v, v, v)
            environment.listenerAngularOrientation = AudioMake3DAngularOrientation(v, v, v)
            environment.outputVolume = v
            environment.distanceAttenuationParameters.referenceDistance = v
            environment.distanceAttenuationParameters.maximumDistance = v
            environment.distanceAttenuationParameters.rolloffFactor = v
            environment.reverbParameters.level = v
            environment.reverbParameters.filterParameters.frequency = v
            environment.reverbParameters.filterParameters.gain = v
            environment.reverbParameters.filterParameters.bandwidth = v
        }

        /// Apple's documented ranges (AVAudioUnitEQ, AVAudioUnitDelay, AVAudioUnitReverb,
        /// AVAudioUnitVarispeed, AVAudioUnitTimePitch, AVAudioEnvironmentNode), Nyquist at 48 kHz
        /// once running.
        func assertInRange(_ v: Float, running: Bool, line: UInt = #line) {
            let nyquist: Float = running ? 24000 : .infinity
            func check(_ x: Float, _ r: ClosedRange<Float>, _ name: String) {
                XCTAssertTrue(r.contains(x), "\(name) = \(x) after setting \(v) (running: \(running))", line: line)
            }
            check(eq.globalGain, -96...24, "globalGain")
            for band in eq.bands {
                check(band.frequency, 10...nyquist, "band.frequency")
                check(band.bandwidth, 0.05...5, "band.bandwidth")
                check(band.gain, -96...24, "band.gain")
            }
            check(Float(delay.delayTime), 0...2, "delayTime")
            check(delay.feedback, -100...100, "feedback")
            check(delay.lowPassCutoff, 10...nyquist, "lowPassCutoff")
            check(delay.wetDryMix, 0...100, "delay.wetDryMix")
            check(reverb.wetDryMix, 0...100, "reverb.wetDryMix")
            check(varispeed.rate, 0.25...4, "varispeed.rate")
            check(timePitch.rate, 1.0 / 32...32, "timePitch.rate")
            check(timePitch.pitch, -2400...2400, "timePitch.pitch")
            check(mixer.outputVolume, 0...4, "mixer.outputVolume")
            let o = environment.listenerAngularOrientation
            for a in [o.yaw, o.pitch, o.roll] { check(a, -180...180, "listenerAngularOrientation") }
            check(environment.outputVolume, 0...4, "environment.outputVolume")
            check(environment.reverbParameters.level, -40...40, "reverbParameters.level")
        }

        for v in Self.extremes { setEverything(to: v); assertInRange(v, running: false) }
        setEverything(to: 1)
        try engine.start()
        _ = try render(engine, frames: 1024, piece: 1024)
        for v in Self.extremes {
            setEverything(to: v)
            assertInRange(v, running: true)
            let out = try render(engine, frames: 1024, piece: 1024)
            XCTAssertTrue(out.allSatisfy { $0.allSatisfy(\.isFinite) }, "output after setting \(v)")
        }
        XCTAssertEqual(engine.editFaultCount, 0, "\(String(describing: engine.lastEditFault))")
        engine.stop()
    }
}
