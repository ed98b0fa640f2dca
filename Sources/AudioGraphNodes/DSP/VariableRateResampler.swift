// Windowed-sinc resampling at a rate that may change every output frame (the varispeed's engine).
import AudioGraphCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads its input at a rate given per output frame: output frame `n` is the band-limited input
/// at position `t_n` (input frames), `t_0 = 0`, `t_{n+1} = t_n + rate_n`. So rate 2 plays twice
/// as fast (half the length, twice the frequencies), rate 0.5 half as fast; a rate change takes
/// effect exactly at the frame it is given for, and the position stays continuous (no click).
///
/// Algorithm: band-limited interpolation (J. O. Smith's resample): `y = fc·Σ x[i]·k(fc·(i - t))`
/// with `k(u) = sinc(u)·w(u/64)` over 64 zero crossings each side, `w` a Kaiser window with
/// β = 9.7 (stopband -97 dB), and the cutoff `fc = 0.95·min(1, 1/rate)` (of the input's Nyquist
/// frequency: above rate 1 the kernel widens so that nothing folds back). The kernel is read
/// from a table of 512 points per zero crossing with linear interpolation. This is libsamplerate's
/// own method; measured next to its `medium` converter (`VariableRateResamplerTests`): a flatter
/// passband (-0.0001 dB against -0.007 dB at 0.85 of Nyquist), aliasing and images within 3 dB of
/// medium's (-117 / -111 dB against -118 / -113 dB), residual noise -138 dB. We do not use
/// libsamplerate or libsoxr here because a ratio that changes per frame at an exact frame needs
/// per-frame control of the position (libsamplerate glides the ratio over a whole call, libsoxr's
/// variable rate works in blocks). Where the rate is exactly 1 and the position a whole frame,
/// the input sample passes unchanged (the kernel would give it back up to its 0.95 bandwidth).
///
/// Latency: the output is time-aligned (frame 0 is input frame 0; no delay is added); to make
/// frame `n` it reads the input up to ``lookahead(rate:)`` frames past `t_n`
/// (68 frames at rates up to 1, 270 at rate 4). The input is read in blocks of
/// `min(64, maximumFrames)` frames, and the output depends only on the input samples and the
/// rates, never on how either is sliced.
///
/// Thread safety: `init`/`deinit` on a control thread (they allocate). Everything else belongs
/// to the render thread and is real-time safe (no allocation, no lock).
package final class VariableRateResampler {
    /// Zero crossings of the kernel on each side at rates up to 1.
    package static let zeroCrossings = 64
    /// Table points per zero crossing.
    static let tableResolution = 512
    /// The Kaiser window's β (stopband about -97 dB).
    static let kaiserBeta = 9.7
    /// The cutoff as a fraction of the (output-limited) Nyquist frequency.
    package static let bandwidth = 0.95
    /// The rates it accepts (others are clamped). The varispeed's `rate` parameter has this
    /// range in the node schema (VarispeedNodeTests checks that they agree).
    package static let rateRange: ClosedRange<Double> = 0.25...4

    /// Input frames the kernel reaches on each side of the position at `rate`.
    package static func lookahead(rate: Double) -> Int {
        let r = clampedRate(rate)
        return Int((Double(zeroCrossings) * max(1, r) / bandwidth).rounded(.up))
    }

    /// `rate` clamped to ``rateRange``; a NaN rate reads as 1 (so a bad automation value
    /// cannot trap the render thread).
    package static func clampedRate(_ rate: Double) -> Double {
        rate.isNaN ? 1 : min(max(rate, rateRange.lowerBound), rateRange.upperBound)
    }

    // MARK: Fixed at init
    package let channelCount: Int
    package let maximumFrames: Int
    private let table: UnsafeMutablePointer<Float>
    private let tableCount: Int
    private let capacity: Int
    private let block: Int
    private let maximumReach: Int
    /// The input history, `capacity` frames per channel.
    private let history: UnsafeMutablePointer<Float>
    private let weights: UnsafeMutablePointer<Float>
    private let pullPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// The rate of each output frame of the next ``process(frameCount:pull:)`` (render thread
    /// writes it first; `maximumFrames` values).
    package let rates: UnsafeMutablePointer<Float>
    /// The output of the last ``process(frameCount:pull:)``.
    package let output: ChannelBufferStorage

    // MARK: Render thread only
    /// Absolute input frame of `history[0]`.
    private var start: Int64 = 0
    /// Frames held in `history`.
    private var filled = 0
    /// The input position of the next output frame.
    package private(set) var position: Double = 0

    /// A resampler for `channelCount` channels producing up to `maximumFrames` frames per call.
    package init(channelCount: Int, maximumFrames: Int) {
        self.channelCount = max(1, channelCount)
        self.maximumFrames = max(1, maximumFrames)
        let h = Self.zeroCrossings, res = Self.tableResolution
        tableCount = h * res + 2
        table = .allocate(capacity: tableCount)
        let i0b = Self.besselI0(Self.kaiserBeta)
        for m in 0..<tableCount {
            let u = Double(m) / Double(res)
            if u >= Double(h) { table[m] = 0; continue }
            let x = u / Double(h)
            let window = Self.besselI0(Self.kaiserBeta * (1 - x * x).squareRoot()) / i0b
            let sinc = u == 0 ? 1 : sin(Double.pi * u) / (Double.pi * u)
            table[m] = Float(sinc * window)
        }
        maximumReach = Self.lookahead(rate: Self.rateRange.upperBound) + 1
        block = min(64, self.maximumFrames)
        capacity = 2 * maximumReach + 2 * block + 4
        history = .allocate(capacity: self.channelCount * capacity)
        history.initialize(repeating: 0, count: self.channelCount * capacity)
        weights = .allocate(capacity: 2 * maximumReach + 4)
        weights.initialize(repeating: 0, count: 2 * maximumReach + 4)
        pullPointers = .allocate(capacity: self.channelCount)
        pullPointers.initialize(repeating: history, count: self.channelCount)
        rates = .allocate(capacity: self.maximumFrames)
        rates.initialize(repeating: 1, count: self.maximumFrames)
        output = ChannelBufferStorage(channelCount: self.channelCount, capacity: self.maximumFrames)
        reset()
    }

    deinit {
        table.deallocate(); history.deallocate(); weights.deallocate(); pullPointers.deallocate(); rates.deallocate()
    }

    /// The modified Bessel function of the first kind, order 0 (power series).
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        while term > 1e-12 * sum {
            term *= (x / (2 * k)) * (x / (2 * k))
            sum += term
            k += 1
        }
        return sum
    }

    /// Back to position 0 with a silent history. Real-time safe.
    package func reset() {
        history.update(repeating: 0, count: channelCount * capacity)
        start = -Int64(maximumReach + 1)
        filled = maximumReach + 1
        position = 0
    }

    /// Makes `frameCount` frames into ``output`` at ``rates``, calling `pull` for the input: it
    /// must fill `count` frames of each channel pointer with the next input frames (zeros when
    /// the input has none). Real-time safe when `pull` is.
    package func process(frameCount: Int,
                        pull: (_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, _ count: Int) -> Void) {
        let res = Double(Self.tableResolution)
        let h = Double(Self.zeroCrossings)
        for j in 0..<min(frameCount, maximumFrames) {
            let r = Self.clampedRate(Double(rates[j]))
            let fc = Self.bandwidth * min(1, 1 / r)
            let reach = h / fc
            let t = position
            let lo = Int64((t - reach).rounded(.down)) + 1
            let hi = Int64((t + reach).rounded(.down))
            // Keep what the widest kernel (rate 4) could need, not just this rate's reach: a
            // later rate increase reaches further back (the capacity holds 2·maximumReach + 2 blocks).
            let keep = Int64(t.rounded(.down)) - Int64(maximumReach)
            while start + Int64(filled) <= hi { pullBlock(keepingFrom: keep, pull: pull) }
            assert(lo >= start && hi < start + Int64(filled), "VariableRateResampler: kernel outside the history")
            if r == 1, t == t.rounded(.down) {
                let offset = Int(Int64(t) - start)
                for c in 0..<channelCount { output.list.channel(c)[j] = history[c * capacity + offset] }
            } else {
                let first = Int(lo - start), count = Int(hi - lo) + 1
                let step = fc * res
                var u = (Double(lo) - t) * step
                for k in 0..<count {
                    let a = abs(u)
                    let index = Int(a)
                    if index + 1 < tableCount {
                        let frac = Float(a - Double(index))
                        let k0 = table[index]
                        weights[k] = Float(fc) * (k0 + frac * (table[index + 1] - k0))
                    } else {
                        weights[k] = 0
                    }
                    u += step
                }
                for c in 0..<channelCount {
                    let x = history + c * capacity + first
                    var sum: Float = 0
                    for k in 0..<count { sum += weights[k] * x[k] }
                    output.list.channel(c)[j] = sum
                }
            }
            position += r
        }
    }

    /// Takes `count` input frames that the caller played as they are (rate 1 at whole
    /// positions, which is what ``process(frameCount:pull:)`` would have made of them): they
    /// join the history and the position moves past them, so that a later
    /// ``process(frameCount:pull:)`` continues from them with the kernel's full reach behind
    /// it. Valid while the position is a whole frame at the end of the history (after
    /// ``reset()`` and further calls of this, before any ``process(frameCount:pull:)``).
    /// `channel(c)` gives channel `c`'s `count` frames, nil for silence. Real-time safe.
    package func append(count: Int, channel: (Int) -> UnsafePointer<Float>?) {
        guard count > 0 else { return }
        let keep = maximumReach + 1
        if count >= keep {
            let from = count - keep
            for c in 0..<channelCount {
                let base = history + c * capacity
                if let x = channel(c) { base.update(from: x + from, count: keep) } else { base.update(repeating: 0, count: keep) }
            }
            start = Int64(position.rounded(.down)) + Int64(count - keep)
            filled = keep
        } else {
            let retain = min(filled, keep - count)
            let drop = filled - retain
            for c in 0..<channelCount {
                let base = history + c * capacity
                if drop > 0 { memmove(base, base + drop, retain * MemoryLayout<Float>.stride) }   // overlapping
                if let x = channel(c) { (base + retain).update(from: x, count: count) } else { (base + retain).update(repeating: 0, count: count) }
            }
            start += Int64(drop)
            filled = retain + count
        }
        position += Double(count)
    }

    /// Appends one block of input, first dropping history before `lo` when there is no room.
    private func pullBlock(keepingFrom lo: Int64,
                           pull: (_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, _ count: Int) -> Void) {
        if capacity - filled < block {
            let drop = Int(max(0, min(Int64(filled), lo - start)))
            if drop > 0 {
                for c in 0..<channelCount {
                    let base = history + c * capacity
                    memmove(base, base + drop, (filled - drop) * MemoryLayout<Float>.stride)   // overlapping
                }
                start += Int64(drop)
                filled -= drop
            }
        }
        for c in 0..<channelCount { pullPointers[c] = history + c * capacity + filled }
        pull(UnsafeBufferPointer(start: pullPointers, count: channelCount), block)
        filled += block
    }
}
