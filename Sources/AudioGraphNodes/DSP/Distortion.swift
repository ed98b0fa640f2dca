// The distortion's five stages (delay, decimation, polynomial, ring modulator, soft clip) per sample, as Docs/Nodes.md writes them.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// AUDistortion's stage chain (cf. `kAudioUnitSubType_Distortion`) on a multichannel signal, one
/// frame at a time, in `Double`. Per channel, with `x` the input frame (Docs/Nodes.md,
/// "distortion", has the same formulas and the reasoning):
///
/// ```
/// u  = g·x                                  g = 10^(softClipGain/20)  (AVAudioUnitDistortion's preGain)
/// e  = d[n−D],  d[n] = u + r·e              D = max(1, ⌊delay·fs/1000 + ½⌋), r = exp(−decay)
/// s1 = (1−m1)·u + m1·e                      m1 = delayMix/100
/// h  = s1 held for P frames                 P = max(1, ⌊2^(6·decimation/100) + ½⌋)
/// q  = Δ·⌊h/Δ + ½⌋                          Δ = 2^(1−b), b = 24 − ⌊23·rounding/100 + ½⌋ bits
/// s2 = (1−m2)·s1 + m2·q                     m2 = decimationMix/100
/// s3 = (1−m3)·s2 + m3·(a1·s2 + a2·s2·s2 + a3·s2·s2·s2)   a1..a3 linear/squared/cubicTerm, m3 = polynomialMix/100
/// c  = (1−β)·sin 2πφ1 + β·sin 2πφ2          φk += freqk/fs (mod 1), β = ringModBalance/100
/// s4 = (1−m4)·s3 + m4·s3·c                  m4 = ringModMix/100
/// s5 = clip(s4)                             clip(v) = v − (4/27)·v³ for |v| ≤ 1.5, else ±1
/// y  = (1−mf)·x + mf·s5                     mf = finalMix/100 (AVAudioUnitDistortion's wetDryMix)
/// ```
///
/// The hold counter and the two oscillator phases are shared by the channels (they advance once
/// per frame); the echo line and the held value are per channel. Values in the echo line below
/// 1e-30 are flushed to 0 and non-finite ones dropped (stored as 0), so a NaN or infinity in the
/// input leaves no trace after its own frame. Everything is a function of the frame index and
/// the per-frame settings, so the output does not depend on how frames are sliced.
///
/// Thread safety: not thread-safe; `init` allocates (control thread), everything else is for the
/// render thread and real-time safe.
final class Distortion {
    /// The longest echo delay, milliseconds (AUDistortion's range).
    static let maximumDelay = 500.0

    /// The derived coefficients of one frame's parameter values.
    struct Settings {
        var gain = 1.0, delayFrames = 1, feedback = 0.0, delayMix = 0.0
        var holdFrames = 1, quantum = 0.0, inverseQuantum = 0.0, decimationMix = 0.0
        var linear = 1.0, squared = 0.0, cubic = 0.0, polynomialMix = 0.0
        var increment1 = 0.0, increment2 = 0.0, balance = 0.0, ringMix = 0.0
        var finalMix = 0.0

        /// From the 16 parameter values in AUDistortion's order (``DistortionPreset/parameterNames``).
        /// Real-time safe.
        @inline(__always)
        init(_ v: (Int) -> Double, sampleRate fs: Double, maximumDelayFrames: Int) {
            delayFrames = min(maximumDelayFrames, max(1, Int((v(0) * fs / 1000 + 0.5).rounded(.down))))
            feedback = exp(-v(1))
            delayMix = v(2) / 100
            holdFrames = max(1, Int((exp2(6 * v(3) / 100) + 0.5).rounded(.down)))
            let bits = 24 - Int((23 * v(4) / 100 + 0.5).rounded(.down))
            quantum = Double(sign: .plus, exponent: 1 - bits, significand: 1)
            inverseQuantum = Double(sign: .plus, exponent: bits - 1, significand: 1)
            decimationMix = v(5) / 100
            linear = v(6)
            squared = v(7)
            cubic = v(8)
            polynomialMix = v(9) / 100
            increment1 = v(10) / fs
            increment2 = v(11) / fs
            balance = v(12) / 100
            ringMix = v(13) / 100
            gain = pow(10, v(14) / 20)
            finalMix = v(15) / 100
        }
    }

    // MARK: Fixed at init
    let sampleRate: Double
    let channelCount: Int
    /// Frames of echo history per channel (the longest delay plus one).
    let capacity: Int
    /// Per channel: `capacity` frames of the echo line `d`.
    private let line: UnsafeMutablePointer<Double>
    /// Per channel: the decimator's held value.
    private let held: UnsafeMutablePointer<Double>

    // MARK: Render thread only
    private var writeIndex = 0
    private var holdCounter = 0
    private var phase1 = 0.0, phase2 = 0.0

    /// A chain for `channelCount` channels at `sampleRate` (allocates 500 ms of history per channel).
    init(sampleRate: Double, channelCount: Int) {
        self.sampleRate = sampleRate
        self.channelCount = max(1, channelCount)
        capacity = Int((Self.maximumDelay * sampleRate / 1000).rounded(.up)) + 2
        line = .allocate(capacity: capacity * self.channelCount)
        held = .allocate(capacity: self.channelCount)
        reset()
    }

    deinit {
        line.deallocate()
        held.deallocate()
    }

    /// The longest delay in frames (what ``Settings`` clamps `D` to).
    var maximumDelayFrames: Int { capacity - 1 }

    /// Clears the history, the held values, the counter and the oscillator phases. Real-time safe.
    func reset() {
        line.update(repeating: 0, count: capacity * channelCount)
        held.update(repeating: 0, count: channelCount)
        writeIndex = 0
        holdCounter = 0
        phase1 = 0
        phase2 = 0
    }

    /// Processes frame `frame` of every channel in `channels` in place with settings `s`.
    /// Real-time safe.
    @inline(__always)
    func process(_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frame: Int, _ s: Settings) {
        if holdCounter >= s.holdFrames { holdCounter = 0 }
        let sample = holdCounter == 0
        var readIndex = writeIndex - s.delayFrames
        if readIndex < 0 { readIndex += capacity }
        let carrier = (1 - s.balance) * sin(2 * Double.pi * phase1) + s.balance * sin(2 * Double.pi * phase2)
        let k = 4.0 / 27.0
        for c in 0..<min(channels.count, channelCount) {
            let history = line + c * capacity
            let x = Double(channels[c][frame])
            let u = s.gain * x
            let e = history[readIndex]
            var d = u + s.feedback * e
            if !d.isFinite || abs(d) < 1e-30 { d = 0 }
            history[writeIndex] = d
            let s1 = (1 - s.delayMix) * u + s.delayMix * e
            if sample { held[c] = s1.isFinite ? s1 : 0 }
            let h = held[c]
            let q = s.quantum * (h * s.inverseQuantum + 0.5).rounded(.down)
            let s2 = (1 - s.decimationMix) * s1 + s.decimationMix * q
            let p = s.linear * s2 + s.squared * s2 * s2 + s.cubic * s2 * s2 * s2
            let s3 = (1 - s.polynomialMix) * s2 + s.polynomialMix * p
            let s4 = (1 - s.ringMix) * s3 + s.ringMix * s3 * carrier
            let s5 = s4 > 1.5 ? 1 : s4 < -1.5 ? -1 : s4 - k * s4 * s4 * s4
            if s.finalMix != 0 {
                channels[c][frame] = Float((1 - s.finalMix) * x + s.finalMix * s5)
            }
        }
        writeIndex += 1
        if writeIndex == capacity { writeIndex = 0 }
        holdCounter += 1
        phase1 += s.increment1
        phase1 -= phase1.rounded(.down)
        phase2 += s.increment2
        phase2 -= phase2.rounded(.down)
    }
}
