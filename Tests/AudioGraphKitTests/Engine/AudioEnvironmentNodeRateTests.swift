// AudioEnvironmentNode's per-source rate (AVAudio3DMixing.rate) against AudioUnitVarispeed before the environment.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioEnvironmentNodeRateTests: XCTestCase {
    /// A mono sine (440 Hz) plus a quieter 1700 Hz one, so that resampling errors show.
    func makeSource() -> AudioSourceNode {
        let frame = Box()
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!
        return AudioSourceNode(format: format) { _, _, frameCount, data in
            let p = UnsafeMutableAudioBufferListPointer(data)[0].mData!.assumingMemoryBound(to: Float.self)
            for i in 0..<Int(frameCount) {
                let t = Double(frame.value + Int64(i)) / 48000
                p[i] = Float(0.4 * sin(2 * Double.pi * 440 * t) + 0.2 * sin(2 * Double.pi * 1700 * t + 0.5))
            }
            frame.value += Int64(frameCount)
            return noErr
        }
    }

    final class Box: @unchecked Sendable { var value: Int64 = 0 }

    /// The source into an environment at `rate` (or through an AudioUnitVarispeed at `varispeed`
    /// and a mixer into an environment at rate 1), rendered for `frames`; `change` runs after `changeAt`
    /// frames (the engine running).
    func render(rate: Float = 1, varispeed: Float? = nil, algorithm: Audio3DMixingRenderingAlgorithm, frames: Int = 19200,
                changeAt: Int? = nil, change: ((AudioNode & AudioMixing, AudioEnvironmentNode, AudioUnitVarispeed?) -> Void)? = nil)
        throws -> [[Float]] {
        let engine = try makeManualEngine()
        let environment = AudioEnvironmentNode()
        engine.attach(environment)
        engine.connect(environment, to: engine.mainMixerNode, format: nil)
        let source = makeSource()
        engine.attach(source)
        var fed: AudioNode & AudioMixing = source
        var unit: AudioUnitVarispeed?
        if let varispeed {
            // An effect carries no mixing settings: a mono mixer after it does (volume 1 passes
            // the samples unchanged).
            let v = AudioUnitVarispeed(), mixer = AudioMixerNode()
            v.rate = varispeed
            engine.attach(v)
            engine.attach(mixer)
            let mono = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!
            engine.connect(source, to: v, format: mono)
            engine.connect(v, to: mixer, format: mono)
            engine.connect(mixer, to: environment, format: mono)
            fed = mixer
            unit = v
        } else {
            engine.connect(source, to: environment, format: nil)
        }
        fed.position = Audio3DPoint(x: 1.5, y: 0, z: -1)
        fed.renderingAlgorithm = algorithm
        fed.rate = rate
        try engine.start()
        guard let changeAt else { return try AudioGraphKitTests.render(engine, frames: frames) }
        var out = try AudioGraphKitTests.render(engine, frames: changeAt)
        change?(fed, environment, unit)
        let rest = try AudioGraphKitTests.render(engine, frames: frames - changeAt)
        for c in out.indices { out[c] += rest[c] }
        return out
    }

    func worst(_ a: [[Float]], _ b: [[Float]]) -> Float {
        var w: Float = 0
        for c in 0..<2 { for f in a[c].indices { w = max(w, abs(a[c][f] - b[c][f])) } }
        return w
    }

    /// Rate 2 and 0.5 on equal power and HRTF: sample for sample what an AudioUnitVarispeed at
    /// that rate before the environment (at rate 1) gives.
    func testSourceRateIsAVarispeedBeforeTheEnvironment() throws {
        for algorithm in [Audio3DMixingRenderingAlgorithm.equalPowerPanning, .HRTF] {
            for rate: Float in [2, 0.5] {
                let y = try render(rate: rate, algorithm: algorithm)
                let want = try render(varispeed: rate, algorithm: algorithm)
                XCTAssertEqual(worst(y, want), 0, "\(algorithm) at \(rate)")
                XCTAssertGreaterThan(worst(y, try render(algorithm: algorithm)), 0.05, "\(algorithm) at \(rate): the rate applies")
            }
        }
    }

    /// `rate` set while the engine runs (on the source, then on its mixing destination): from
    /// the next render, as the varispeed's `rate` set at the same moment; out of 0.5...2 it is
    /// clamped (4 plays at 2).
    func testRateSetWhileRunningAndClamped() throws {
        for algorithm in [Audio3DMixingRenderingAlgorithm.equalPowerPanning, .HRTF] {
            let y = try render(algorithm: algorithm, changeAt: 7000) { node, environment, _ in
                node.destination(forMixer: environment, bus: 0)!.rate = 1.6
            }
            let want = try render(varispeed: 1, algorithm: algorithm, changeAt: 7000) { _, _, v in v!.rate = 1.6 }
            XCTAssertEqual(worst(y, want), 0, "\(algorithm)")
            XCTAssertGreaterThan(worst(y, try render(algorithm: algorithm)), 0.05)
        }
        XCTAssertEqual(worst(try render(rate: 4, algorithm: .equalPowerPanning), try render(rate: 2, algorithm: .equalPowerPanning)), 0)
        XCTAssertEqual(worst(try render(rate: 0.1, algorithm: .equalPowerPanning), try render(rate: 0.5, algorithm: .equalPowerPanning)), 0)
    }
}
