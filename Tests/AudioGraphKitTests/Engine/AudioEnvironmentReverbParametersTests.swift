// The environment's reverbParameters through the engine API: the filter on the reverb's output is applied.
import AudioGraphKit
import Foundation
import XCTest

final class AudioEnvironmentReverbParametersTests: XCTestCase {
    /// Renders 9600 frames of a 700 Hz + 9 kHz tone at 1 m right of the listener with the reverb
    /// (largeRoom, blend 1) configured by `configure`.
    func renderScene(_ configure: (AudioEnvironmentReverbParameters) -> Void) throws -> [[Float]] {
        let engine = try makeManualEngine(maximum: 1024)
        let environment = AudioEnvironmentNode()
        let source = AudioSourceNode(format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!) { _, time, frameCount, data in
            let p = UnsafeMutableAudioBufferListPointer(data)[0].mData!.assumingMemoryBound(to: Float.self)
            let t0 = Int(time.pointee.mSampleTime)
            for i in 0..<Int(frameCount) {
                let n = Double(t0 + i)
                p[i] = Float(0.3 * sin(2 * .pi * 700 * n / 48000) + 0.3 * sin(2 * .pi * 9000 * n / 48000))
            }
            return noErr
        }
        engine.attach(environment)
        engine.attach(source)
        engine.connect(environment, to: engine.mainMixerNode, format: nil)
        engine.connect(source, to: environment, format: nil)
        source.position = AudioMake3DPoint(1, 0, 0)
        source.reverbBlend = 1
        environment.reverbParameters.loadFactoryReverbPreset(.largeRoom)
        configure(environment.reverbParameters)
        try engine.start()
        return try render(engine, frames: 9600, piece: 1024)
    }

    /// The RBJ cookbook low-pass (Q = 1/√2) in Double, the reference filter.
    func lowPass(_ x: [Double], cutoff: Double) -> [Double] {
        let w = 2 * Double.pi * cutoff / 48000, alpha = sin(w) / (2 * 0.70710678), c = cos(w)
        let a0 = 1 + alpha
        let b0 = (1 - c) / 2 / a0, b1 = (1 - c) / a0, b2 = b0, a1 = -2 * c / a0, a2 = (1 - alpha) / a0
        var y = [Double](repeating: 0, count: x.count)
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
        for n in x.indices {
            y[n] = b0 * x[n] + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1; x1 = x[n]; y2 = y1; y1 = y[n]
        }
        return y
    }

    func testTheFilterAppliesToTheReverbOnly() throws {
        let dry = try renderScene { $0.enable = false }
        let wet = try renderScene { $0.enable = true }
        let filtered = try renderScene { r in
            r.enable = true
            r.filterParameters.filterType = .lowPass
            r.filterParameters.frequency = 1000
            r.filterParameters.bypass = false
        }
        for c in 0..<2 {
            let reverbOnly = (0..<9600).map { Double(wet[c][$0]) - Double(dry[c][$0]) }
            let expected = lowPass(reverbOnly, cutoff: 1000)
            var worst = 0.0
            for n in 0..<9600 { worst = max(worst, abs(Double(filtered[c][n]) - Double(dry[c][n]) - expected[n])) }
            XCTAssertLessThan(worst, 1e-4, "channel \(c)")
            XCTAssertGreaterThan(reverbOnly.map(abs).max()!, 0.05, "the reverb is audible")
        }
        // The default band (parametric, 0 dB) changes nothing: exactly the unfiltered reverb.
        XCTAssertEqual(try renderScene { $0.enable = true; $0.filterParameters.frequency = 2000 }, wet)
    }
}
