// The one reverb engine (an 8-line feedback delay network): the reverb node's and the environment's reverb send.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The project's one reverberator, used by the `reverb` node (``ReverbNode``) and by the
/// environment's reverb send (so both sound the same by construction): an eight-line feedback delay network (FDN) with an
/// orthogonal Hadamard feedback matrix and, in every line, Jot's first-order absorption filter,
/// so that the decay time is exactly the preset's at low frequencies and shorter at high ones.
///
/// Per line `i` of length `D_i` frames, the loop gain at DC is `g_i = 10^(-3·D_i / (fs·T60))`
/// (the sound loses 60 dB in `T60` seconds whichever line it travels), and the absorption
/// filter `f[n] = g_i·(1 - b_i)·y[n] + b_i·f[n-1]` with
/// `b_i = ln(10)/4 · log10(g_i) · (1 - 1/α²)` makes the decay time at Nyquist `α·T60`
/// (J.-M. Jot, 1991). The Hadamard matrix (scaled by 1/√8) is orthogonal and every loop gain is
/// below 1, so the network is stable for every preset. A mono input feeds all lines with a
/// fixed sign pattern; a stereo input feeds them with two patterns (left and right, orthogonal,
/// each scaled by 1/√2 so that a centred stereo signal excites the network like its mono
/// version would, in energy); the left and right outputs take the lines with two other sign
/// patterns (decorrelated) and are
/// scaled by 1/√8, by a per-preset normalisation that gives each channel's impulse response
/// about unit energy (so at `level` 0 dB the reverb of white noise is about as loud as the
/// noise), and by `level`.
///
/// Presets (decay time `T60` at low frequencies, high-frequency ratio `α`, line lengths):
///
/// | preset | T60 | α | lines (ms) |
/// |---|---|---|---|
/// | `smallRoom` | 0.4 s | 0.5 | 10.7 ... 28.6 |
/// | `mediumRoom` | 0.8 s | 0.5 | 14.0 ... 37.2 |
/// | `largeRoom` | 1.2 s | 0.5 | 17.2 ... 45.8 |
/// | `largeRoom2` | 1.5 s | 0.6 | 18.3 ... 48.7 |
/// | `mediumChamber` | 1.0 s | 0.6 | 12.9 ... 34.4 |
/// | `largeChamber` | 1.5 s | 0.6 | 16.1 ... 43.0 |
/// | `mediumHall` | 1.5 s | 0.45 | 19.3 ... 51.5 |
/// | `mediumHall2` | 1.7 s | 0.5 | 19.3 ... 51.5 |
/// | `mediumHall3` | 2.0 s | 0.55 | 20.4 ... 54.4 |
/// | `largeHall` | 2.4 s | 0.45 | 21.5 ... 57.3 |
/// | `largeHall2` | 3.0 s | 0.5 | 23.6 ... 63.0 |
/// | `cathedral` | 4.5 s | 0.4 | 30.1 ... 80.2 |
/// | `plate` | 1.3 s | 0.8 | 7.5 ... 20.0 |
///
/// Thread safety: `init`/`deinit` on a control thread (they allocate the lines, sized for the
/// longest preset). `process`, `reset`, `setPreset` and `setLevel` belong to the render thread
/// and are real-time safe; the output depends only on the input samples (per-sample state), not
/// on how the frames are sliced.
package final class Reverb {
    /// A named room: the names of AVAudioUnitReverbPreset (and of the graph format's
    /// `reverb.preset`), with the project's own decay times.
    package enum Preset: String, Sendable, Hashable, CaseIterable {
        case smallRoom, mediumRoom, largeRoom, largeRoom2, mediumHall, mediumHall2, mediumHall3, largeHall,
             largeHall2, plate, mediumChamber, largeChamber, cathedral

        /// (decay time to -60 dB at low frequencies in s, high-frequency ratio α, line scale).
        private var design: (decayTime: Double, highFrequencyRatio: Double, size: Double) {
            switch self {
            case .smallRoom: return (0.4, 0.5, 0.5)
            case .mediumRoom: return (0.8, 0.5, 0.65)
            case .largeRoom: return (1.2, 0.5, 0.8)
            case .largeRoom2: return (1.5, 0.6, 0.85)
            case .mediumChamber: return (1.0, 0.6, 0.6)
            case .largeChamber: return (1.5, 0.6, 0.75)
            case .mediumHall: return (1.5, 0.45, 0.9)
            case .mediumHall2: return (1.7, 0.5, 0.9)
            case .mediumHall3: return (2.0, 0.55, 0.95)
            case .largeHall: return (2.4, 0.45, 1.0)
            case .largeHall2: return (3.0, 0.5, 1.1)
            case .cathedral: return (4.5, 0.4, 1.4)
            case .plate: return (1.3, 0.8, 0.35)
            }
        }

        /// The decay time (s) to -60 dB at low frequencies.
        package var decayTime: Double { design.decayTime }
        /// The decay time at Nyquist as a fraction of `decayTime`.
        package var highFrequencyRatio: Double { design.highFrequencyRatio }
        /// Line lengths scale (1 = the base lengths of 21.5...57.3 ms).
        var size: Double { design.size }
    }

    /// Base line lengths in frames at 48 kHz (mutually prime), scaled by the preset's size.
    static let baseLengths: [Double] = [1031, 1327, 1523, 1783, 1987, 2251, 2477, 2749]
    static let lineCount = 8

    package let sampleRate: Double

    // MARK: Render thread only
    package private(set) var preset: Preset
    /// The output level in dB.
    package private(set) var level: Double
    private var outputGain: Float
    /// Scales the output so that the impulse response has about unit energy: 1/sqrt of the
    /// recirculated energy `|H_i|²/(1 - |H_i|²)` averaged over lines and frequencies.
    private var normalization: Float = 1
    private let buffer: UnsafeMutablePointer<Float>   // all lines, each `capacity` long
    private let capacity: Int
    private let lengths: UnsafeMutablePointer<Int>
    private let positions: UnsafeMutablePointer<Int>
    private let feedforward: UnsafeMutablePointer<Float>   // g(1-b)
    private let pole: UnsafeMutablePointer<Float>          // b
    private let filterState: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>
    /// Sign patterns: input distribution and the two outputs (fixed, mutually decorrelating).
    private let inputSigns: UnsafeMutablePointer<Float>
    private let rightInputSigns: UnsafeMutablePointer<Float>
    private let leftSigns: UnsafeMutablePointer<Float>
    private let rightSigns: UnsafeMutablePointer<Float>

    /// Makes a reverb for `sampleRate`, with `preset` and an output `level` in dB.
    package init(sampleRate: Double, preset: Preset = .mediumRoom, level: Double = 0) {
        self.sampleRate = sampleRate
        self.preset = preset
        self.level = level
        self.outputGain = Float(pow(10, level / 20))
        let longest = Preset.allCases.map(\.size).max()! * Self.baseLengths.max()! * sampleRate / 48000
        capacity = Int(longest.rounded(.up)) + 1
        let n = Self.lineCount
        buffer = .allocate(capacity: n * capacity)
        buffer.initialize(repeating: 0, count: n * capacity)
        lengths = .allocate(capacity: n); lengths.initialize(repeating: 1, count: n)
        positions = .allocate(capacity: n); positions.initialize(repeating: 0, count: n)
        feedforward = .allocate(capacity: n); feedforward.initialize(repeating: 0, count: n)
        pole = .allocate(capacity: n); pole.initialize(repeating: 0, count: n)
        filterState = .allocate(capacity: n); filterState.initialize(repeating: 0, count: n)
        scratch = .allocate(capacity: n); scratch.initialize(repeating: 0, count: n)
        inputSigns = .allocate(capacity: n)
        rightInputSigns = .allocate(capacity: n)
        leftSigns = .allocate(capacity: n)
        rightSigns = .allocate(capacity: n)
        let b: [Float] = [1, -1, 1, 1, -1, -1, 1, -1]
        let l: [Float] = [1, 1, -1, 1, -1, 1, -1, -1]
        let r: [Float] = [1, -1, -1, -1, 1, 1, 1, -1]
        let b2: [Float] = [1, 1, 1, -1, 1, -1, -1, -1]
        for i in 0..<n {
            inputSigns[i] = b[i]; rightInputSigns[i] = b2[i]; leftSigns[i] = l[i]; rightSigns[i] = r[i]
        }
        configure()
    }

    deinit {
        buffer.deallocate(); lengths.deallocate(); positions.deallocate(); feedforward.deallocate()
        pole.deallocate(); filterState.deallocate(); scratch.deallocate()
        inputSigns.deallocate(); rightInputSigns.deallocate(); leftSigns.deallocate(); rightSigns.deallocate()
    }

    /// The line length (frames) and loop coefficients for the current preset.
    private func configure() {
        let t60 = preset.decayTime, alpha = preset.highFrequencyRatio
        var energy = 0.0
        for i in 0..<Self.lineCount {
            let d = max(1, min(capacity - 1, Int((Self.baseLengths[i] * preset.size * sampleRate / 48000).rounded())))
            lengths[i] = d
            let g = pow(10, -3 * Double(d) / (sampleRate * t60))
            let b = log(10) / 4 * log10(g) * (1 - 1 / (alpha * alpha))
            feedforward[i] = Float(g * (1 - b))
            pole[i] = Float(b)
            // Energy of this line's recirculation, averaged over frequency: every output pass has
            // been through the absorption filter k >= 1 times, so sum |H|^2k = |H|²/(1 - |H|²).
            let grid = 64
            for k in 0..<grid {
                let w = Double.pi * (Double(k) + 0.5) / Double(grid)
                let h2 = g * g * (1 - b) * (1 - b) / (1 - 2 * b * cos(w) + b * b)
                energy += h2 / (1 - h2) / Double(grid * Self.lineCount)
            }
        }
        normalization = Float(1 / energy.squareRoot())
    }

    /// Changes the room; the tail is cleared (a new room starts silent). Real-time safe.
    package func setPreset(_ newPreset: Preset) {
        guard newPreset != preset else { return }
        preset = newPreset
        configure()
        reset()
    }

    /// Sets the output level in dB. Real-time safe.
    package func setLevel(_ dB: Double) {
        level = dB
        outputGain = Float(pow(10, dB / 20))
    }

    /// Silences the tail. Real-time safe.
    package func reset() {
        buffer.update(repeating: 0, count: Self.lineCount * capacity)
        positions.update(repeating: 0, count: Self.lineCount)
        filterState.update(repeating: 0, count: Self.lineCount)
    }

    /// Reverberates `frameCount` frames of the mono `input` into `left`/`right` (added to their
    /// contents when `accumulate`, written otherwise). Real-time safe.
    package func process(input: UnsafePointer<Float>, left: UnsafeMutablePointer<Float>,
                        right: UnsafeMutablePointer<Float>, frameCount: Int, accumulate: Bool) {
        process(inputLeft: input, inputRight: nil, left: left, right: right, frameCount: frameCount, accumulate: accumulate)
    }

    /// Reverberates `frameCount` frames of a stereo input (`inputRight` nil: a mono one in
    /// `inputLeft`) into `left`/`right` (added to their contents when `accumulate`, written
    /// otherwise). The outputs may be the input buffers (each frame is read before it is
    /// written). Real-time safe.
    package func process(inputLeft: UnsafePointer<Float>, inputRight: UnsafePointer<Float>?,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                        frameCount: Int, accumulate: Bool) {
        let n = Self.lineCount
        let norm = Float(1 / Double(n).squareRoot())
        let gain = outputGain * norm * normalization
        let stereoScale = Float(0.5.squareRoot())
        let f = scratch
        for frame in 0..<frameCount {
            var outL: Float = 0, outR: Float = 0
            // Read each line's end through its absorption filter.
            for i in 0..<n {
                let y = buffer[i * capacity + positions[i]]
                var v = feedforward[i] * y + pole[i] * filterState[i]
                // No denormals in the dying tail (it ends at exactly 0), and no NaN or infinity:
                // one bad input sample would otherwise circulate in the feedback forever.
                if !(abs(v) >= 1e-30 && abs(v) < .infinity) { v = 0 }
                filterState[i] = v
                f[i] = v
                outL += leftSigns[i] * v
                outR += rightSigns[i] * v
            }
            // Orthogonal feedback: the fast Walsh-Hadamard transform, scaled by 1/sqrt(8).
            var h = 1
            while h < n {
                var i = 0
                while i < n {
                    for j in i..<(i + h) {
                        let a = f[j], b = f[j + h]
                        f[j] = a + b
                        f[j + h] = a - b
                    }
                    i += 2 * h
                }
                h *= 2
            }
            if let inputRight {
                let xL = stereoScale * inputLeft[frame], xR = stereoScale * inputRight[frame]
                for i in 0..<n {
                    buffer[i * capacity + positions[i]] = f[i] * norm + inputSigns[i] * xL + rightInputSigns[i] * xR
                }
            } else {
                let x = inputLeft[frame]
                for i in 0..<n {
                    buffer[i * capacity + positions[i]] = f[i] * norm + inputSigns[i] * x
                }
            }
            for i in 0..<n {
                let p = positions[i] + 1
                positions[i] = p == lengths[i] ? 0 : p
            }
            if accumulate {
                left[frame] += gain * outL
                right[frame] += gain * outR
            } else {
                left[frame] = gain * outL
                right[frame] = gain * outR
            }
        }
    }
}
