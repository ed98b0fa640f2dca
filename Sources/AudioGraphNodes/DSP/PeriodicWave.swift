// Web Audio's PeriodicWave: a custom oscillator waveform from Fourier terms, peak-normalized, band-limited when played.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A custom waveform as Web Audio's `PeriodicWave` defines it
/// (https://www.w3.org/TR/webaudio/#PeriodicWave): `x̃(t) = Σ_{k=1}^{L−1} a_k·cos(2πkt) + b_k·sin(2πkt)`
/// with `a` = `real`, `b` = `imag` (their index 0, the DC term, is ignored), scaled by
/// `1 / max|x̃|` unless normalization is disabled. The peak is searched on `max(4096, 32·L)`
/// evenly spaced phases and refined by a parabola through the best three (within 1e-6 of the
/// true peak for the tested waves; `OscillatorNodeTests`). Played at frequency `f`, only the
/// harmonics below the Nyquist frequency sound (`k·f < sampleRate/2`), so nothing aliases.
///
/// Thread safety: immutable after init (control thread, allocates); ``value(phase:frequency:sampleRate:)``
/// is real-time safe.
final class PeriodicWave: @unchecked Sendable {
    /// The most terms accepted (L).
    static let maximumTermCount = 1024

    /// Normalized `a_k`, `b_k` for k = 0..<count (index 0 zero).
    let cosines: UnsafeMutablePointer<Double>
    let sines: UnsafeMutablePointer<Double>
    let count: Int
    /// The factor applied to the terms (1 without normalization).
    let scale: Double

    /// Why `real`/`imag` are not a wave Web Audio accepts, or nil.
    static func problem(real: [Double]?, imag: [Double]?) -> String? {
        if let real, let imag, real.count != imag.count { return "real and imag must have the same length (\(real.count) and \(imag.count))" }
        let n = real?.count ?? imag?.count ?? 2
        if n < 2 { return "a periodic wave needs at least 2 terms, found \(n)" }
        if n > maximumTermCount { return "a periodic wave has at most \(maximumTermCount) terms, found \(n)" }
        if !((real ?? []) + (imag ?? [])).allSatisfy(\.isFinite) { return "the terms must be finite" }
        return nil
    }

    /// The wave of `real`/`imag` (Web Audio's defaults: a missing array is zeros; both missing,
    /// a sine). Control thread.
    init(real: [Double]?, imag: [Double]?, disableNormalization: Bool) {
        let n = max(2, real?.count ?? imag?.count ?? 2)
        count = n
        cosines = .allocate(capacity: n)
        sines = .allocate(capacity: n)
        cosines.initialize(repeating: 0, count: n)
        sines.initialize(repeating: 0, count: n)
        if real == nil && imag == nil {
            sines[1] = 1
        } else {
            for k in 1..<n {
                cosines[k] = real?[k] ?? 0
                sines[k] = imag?[k] ?? 0
            }
        }
        var s = 1.0
        // Web Audio's default wave, sin(2πt), peaks at exactly 1 (the search finds 1.0 at t = 1/4,
        // `PeriodicWaveTests`): no search for it, which every oscillator node's kernel makes.
        if !disableNormalization && !(real == nil && imag == nil) {
            let peak = Self.peak(cosines, sines, n)
            s = peak > 0 ? 1 / peak : 1
            for k in 0..<n {
                cosines[k] *= s
                sines[k] *= s
            }
        }
        scale = s
    }

    deinit {
        cosines.deallocate()
        sines.deallocate()
    }

    /// `max|x̃(t)|` over a grid of phases, refined by a parabola through the grid's best three.
    static func peak(_ a: UnsafePointer<Double>, _ b: UnsafePointer<Double>, _ n: Int) -> Double {
        let m = max(4096, 32 * n)
        func value(_ t: Double) -> Double { abs(sum(a, b, terms: n - 1, phase: t)) }
        var best = 0, bestValue = -1.0
        for j in 0..<m {
            let v = value(Double(j) / Double(m))
            if v > bestValue { best = j; bestValue = v }
        }
        let h = 1 / Double(m), t = Double(best) * h
        let y0 = value(t - h), y1 = bestValue, y2 = value(t + h)
        let denominator = y0 - 2 * y1 + y2
        guard denominator < 0 else { return y1 }
        let offset = 0.5 * (y0 - y2) / denominator   // in grid steps, within ±0.5
        return max(y1, value(t + offset * h))
    }

    /// `Σ_{k=1}^{terms} a_k cos(2πkφ) + b_k sin(2πkφ)` by Clenshaw's recurrence. Real-time safe.
    @inline(__always)
    static func sum(_ a: UnsafePointer<Double>, _ b: UnsafePointer<Double>, terms: Int, phase: Double) -> Double {
        if terms <= 0 { return 0 }
        let (s, c) = BandLimitedSeries.sinCos(cycles: phase - phase.rounded(.down))
        let twoCos = 2 * c
        var ca1 = 0.0, ca2 = 0.0, sb1 = 0.0, sb2 = 0.0
        var k = terms
        while k >= 1 {
            let na = a[k] + twoCos * ca1 - ca2
            ca2 = ca1; ca1 = na
            let nb = b[k] + twoCos * sb1 - sb2
            sb2 = sb1; sb1 = nb
            k -= 1
        }
        // Σ a_k cos(kθ) = cosθ·c_1 − c_2; Σ b_k sin(kθ) = sinθ·s_1.
        return (c * ca1 - ca2) + s * sb1
    }

    /// The normalized wave at `phase` (cycles) played at `frequency`: the terms below Nyquist. Real-time safe.
    @inline(__always)
    func value(phase: Double, frequency: Double, sampleRate: Double) -> Double {
        let limit = frequency > 0 ? (sampleRate / 2 / frequency).rounded(.up) - 1 : Double(count - 1)
        let terms = min(count - 1, Int(max(0, min(limit, Double(count - 1)))))
        return Self.sum(cosines, sines, terms: terms, phase: phase)
    }
}
