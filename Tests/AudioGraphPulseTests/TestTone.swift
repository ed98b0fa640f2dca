// A sine render callback for the PulseAudio tests, with the formula the tests compare against.
import AudioGraphPulse
import Foundation
import Synchronization

/// Renders `amplitudes[c] * sin(2π f n / rate + phase)` on channel c at frame n (computed in
/// Double, rounded to Float once), so a test can recompute every played sample exactly. With
/// `noiseChannel` set, that channel instead carries white noise that is a pure function of the
/// frame number (SplitMix64), which makes every position unique for aligning a recording.
/// Optionally stalls once (sleeping inside the render call — deliberately breaking the real-time
/// rules) to provoke an underrun.
final class TestTone: @unchecked Sendable {
    let frequency: Double
    let amplitudes: [Double]
    let phase: Double
    let sampleRate: Double
    /// Sleep this long once, in the slice containing `stallAtFrame` (0: never).
    let stallSeconds: Double
    let stallAtFrame: Int64
    let noiseChannel: Int?
    private let stalled = Atomic<Bool>(false)

    init(frequency: Double, amplitudes: [Double], phase: Double = 0.3, sampleRate: Double = 48000,
         stallSeconds: Double = 0, stallAtFrame: Int64 = 0, noiseChannel: Int? = nil) {
        self.noiseChannel = noiseChannel
        self.frequency = frequency
        self.amplitudes = amplitudes
        self.phase = phase
        self.sampleRate = sampleRate
        self.stallSeconds = stallSeconds
        self.stallAtFrame = stallAtFrame
    }

    @inline(__always)
    func sample(channel: Int, frame: Int64) -> Float {
        if channel == noiseChannel {
            var z = UInt64(bitPattern: frame) &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Float(amplitudes[channel] * (Double(z >> 11) / Double(1 << 53) * 2 - 1))
        }
        return Float(amplitudes[channel] * sin(2 * Double.pi * frequency * Double(frame) / sampleRate + phase))
    }

    var render: PulseRenderCallback {
        { [self] sampleTime, frames, channels in
            for c in 0..<amplitudes.count {
                for f in 0..<frames { channels[c][f] = sample(channel: c, frame: sampleTime + Int64(f)) }
            }
            if stallSeconds > 0, sampleTime <= stallAtFrame, stallAtFrame < sampleTime + Int64(frames),
               !stalled.exchange(true, ordering: .relaxed) {
                usleep(UInt32(stallSeconds * 1e6))
            }
        }
    }
}
