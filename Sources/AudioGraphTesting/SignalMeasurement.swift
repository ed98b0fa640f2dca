// Signal measurements for tests: levels, differences, alignment and frequency, all in Double.
import Foundation

/// Measurements on sampled signals, computed in `Double` whatever the sample type.
///
/// Every function takes any sequence of `Float` or `Double` samples (arrays, buffer pointers,
/// slices). They are meant for tests, run on the test's thread, allocate freely and are not
/// real-time safe.
///
/// Thread safety: stateless; every function may be called from any thread concurrently.
public enum SignalMeasurement {
    /// Root mean square: sqrt(Σx²/N); 0 for an empty signal. A sine of amplitude A over whole
    /// periods has RMS A/√2.
    public static func rms<S: Sequence>(_ samples: S) -> Double where S.Element: BinaryFloatingPoint {
        var sum = 0.0
        var count = 0
        for sample in samples {
            let value = Double(sample)
            sum += value * value
            count += 1
        }
        return count == 0 ? 0 : (sum / Double(count)).squareRoot()
    }

    /// Largest absolute sample value; 0 for an empty signal, NaN when a sample is NaN.
    public static func peak<S: Sequence>(_ samples: S) -> Double where S.Element: BinaryFloatingPoint {
        var result = 0.0
        for sample in samples {
            let value = Double(sample).magnitude
            if value.isNaN { return .nan }
            result = max(result, value)
        }
        return result
    }

    /// Arithmetic mean (the DC level); 0 for an empty signal.
    public static func mean<S: Sequence>(_ samples: S) -> Double where S.Element: BinaryFloatingPoint {
        var sum = 0.0
        var count = 0
        for sample in samples {
            sum += Double(sample)
            count += 1
        }
        return count == 0 ? 0 : sum / Double(count)
    }

    /// Decibels relative to full scale: 20·log10(|value|). A peak of 1.0 is 0 dBFS, 0.5 is
    /// −6.02 dBFS, 0 is −infinity. Pass `rms(x)` for an RMS level (a full-scale sine then reads
    /// −3.01 dB).
    public static func dBFS(_ value: Double) -> Double {
        20 * log10(value.magnitude)
    }

    /// The linear gain of `decibels`: 10^(dB/20).
    public static func linear(fromDecibels decibels: Double) -> Double {
        pow(10, decibels / 20)
    }

    /// Largest |a[i] − b[i]|; `.infinity` when the lengths differ, NaN when a sample is NaN.
    public static func maxAbsDifference<A: Collection, B: Collection>(_ a: A, _ b: B) -> Double
    where A.Element: BinaryFloatingPoint, B.Element: BinaryFloatingPoint {
        guard a.count == b.count else { return .infinity }
        var result = 0.0
        for (x, y) in zip(a, b) {
            let difference = (Double(x) - Double(y)).magnitude
            if difference.isNaN { return .nan }
            result = max(result, difference)
        }
        return result
    }

    /// The largest |got[n] − expected(n)| over `range` (default: every index) and the first index
    /// where it occurs; (0, -1) when the range is empty.
    public static func worstError(_ got: [Float], _ range: Range<Int>? = nil,
                                  _ expected: (Int) -> Double) -> (error: Double, at: Int) {
        var worst = 0.0, at = -1
        for n in range ?? got.indices {
            let e = abs(Double(got[n]) - expected(n))
            if e > worst || at < 0 { worst = max(worst, e); at = e >= worst ? n : at }
        }
        return (worst, at)
    }

    /// The lag L in −maxLag...maxLag that best aligns `reference` with `signal`, meaning
    /// `signal[n + L] ≈ reference[n]`: a positive lag says `signal` is `reference` delayed by L frames.
    ///
    /// Chooses the largest normalised cross-correlation Σ r[n]·s[n+L] / sqrt(Σr²·Σs²), each sum
    /// over the frames where both exist, so that short overlaps at large lags are not favoured or
    /// penalised by their length. Returns nil when no lag has a non-silent overlap.
    public static func bestLag<R: Collection, S: Collection>(of reference: R, in signal: S, maxLag: Int) -> Int?
    where R.Element: BinaryFloatingPoint, S.Element: BinaryFloatingPoint {
        let r = reference.map { Double($0) }
        let s = signal.map { Double($0) }
        var best: (lag: Int, correlation: Double)?
        for lag in -maxLag...maxLag {
            guard let correlation = normalizedCorrelation(r, s, lag: lag) else { continue }
            if best == nil || correlation > best!.correlation { best = (lag, correlation) }
        }
        return best?.lag
    }

    /// The normalised cross-correlation of `reference` and `signal` at one lag (see `bestLag`),
    /// in −1...1; nil when the overlap is empty or silent.
    public static func normalizedCrossCorrelation<R: Collection, S: Collection>(of reference: R, in signal: S,
                                                                                  lag: Int) -> Double?
    where R.Element: BinaryFloatingPoint, S.Element: BinaryFloatingPoint {
        normalizedCorrelation(reference.map { Double($0) }, signal.map { Double($0) }, lag: lag)
    }

    private static func normalizedCorrelation(_ r: [Double], _ s: [Double], lag: Int) -> Double? {
        let first = max(0, -lag)
        let end = min(r.count, s.count - lag)
        guard first < end else { return nil }
        var product = 0.0, energyR = 0.0, energyS = 0.0
        r.withUnsafeBufferPointer { r in
            s.withUnsafeBufferPointer { s in
                for n in first..<end {
                    let a = r[n], b = s[n + lag]
                    product += a * b
                    energyR += a * a
                    energyS += b * b
                }
            }
        }
        guard energyR > 0, energyS > 0 else { return nil }
        return product / (energyR * energyS).squareRoot()
    }

    /// Estimates the frequency in Hz of the dominant sinusoid of `samples`.
    ///
    /// First a rough value from the upward zero crossings of the signal less its mean, linearly
    /// interpolated between samples and counted with hysteresis (the signal must fall below
    /// −h and rise above +h, h = RMS/2, so noise near zero cannot add crossings). Then the
    /// value is refined by maximising the energy that a least-squares fit of DC + cos + sin at
    /// the trial frequency explains: a grid of quarter bins (bin = sampleRate/N) over ±3 bins
    /// around the rough value, then a golden-section search within the main lobe of the best
    /// grid point. For a clean sine the result is exact to about 1e-6 Hz; noise and weaker
    /// tones bias it only as much as they move the fit's maximum (0.013 Hz for a 1234.5 Hz sine
    /// in uniform noise at 7.8 dB SNR over 0.2 s). The tone must dominate: at lower SNR the
    /// crossings miscount. Returns nil when the signal has fewer than two upward crossings.
    public static func estimateFrequency<S: Collection>(_ samples: S, sampleRate: Double) -> Double?
    where S.Element: BinaryFloatingPoint {
        let x = samples.map { Double($0) }
        let dc = mean(x)
        let hysteresis = rms(x.map { $0 - dc }) / 2
        guard hysteresis > 0 else { return nil }
        var firstCrossing: Double?
        var lastCrossing = 0.0
        var crossings = 0
        var armed = false          // the signal went below −h since the last counted crossing
        var candidate: Double?     // the latest upward zero crossing while armed
        for n in 1..<max(1, x.count) {
            let previous = x[n - 1] - dc, current = x[n] - dc
            if current < -hysteresis { armed = true; candidate = nil; continue }
            guard armed else { continue }
            if previous < 0 && current >= 0 { candidate = Double(n - 1) + previous / (previous - current) }
            if current > hysteresis, let t = candidate {
                if firstCrossing == nil { firstCrossing = t }
                lastCrossing = t
                crossings += 1
                armed = false
                candidate = nil
            }
        }
        guard let first = firstCrossing, crossings >= 2, lastCrossing > first else { return nil }
        let rough = Double(crossings - 1) * sampleRate / (lastCrossing - first)

        let energy = { (frequency: Double) -> Double in fittedEnergy(x, frequency: frequency, sampleRate: sampleRate) }
        let bin = sampleRate / Double(x.count)
        let step = bin / 4
        var bestFrequency = rough
        var bestEnergy = -Double.infinity
        for i in -12...12 {
            let frequency = rough + Double(i) * step
            guard frequency > 0, frequency < sampleRate / 2 else { continue }
            let e = energy(frequency)
            if e > bestEnergy { bestEnergy = e; bestFrequency = frequency }
        }
        // Golden-section search for the maximum within one grid step either side (inside the
        // main lobe, which is about a bin wide each side, so the energy is unimodal there).
        let ratio = (5.0.squareRoot() - 1) / 2
        var a = max(bestFrequency - step, 1e-9), b = min(bestFrequency + step, sampleRate / 2)
        var c = b - ratio * (b - a), d = a + ratio * (b - a)
        var ec = energy(c), ed = energy(d)
        while b - a > 1e-10 * max(1, bestFrequency) {
            if ec > ed {
                b = d; d = c; ed = ec
                c = b - ratio * (b - a); ec = energy(c)
            } else {
                a = c; c = d; ec = ed
                d = a + ratio * (b - a); ed = energy(d)
            }
        }
        return (a + b) / 2
    }

    /// Energy of the least-squares fit of DC + cos + sin at `frequency` (the part of ‖x‖² the
    /// three columns explain), from 3×3 normal equations.
    private static func fittedEnergy(_ x: [Double], frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        // Gram matrix G and right-hand side h of the columns 1, cos(wn), sin(wn).
        var g = [[Double]](repeating: [0, 0, 0], count: 3)
        var h = [0.0, 0.0, 0.0]
        x.withUnsafeBufferPointer { x in
            var s11 = 0.0, s1c = 0.0, s1s = 0.0, scc = 0.0, scs = 0.0, sss = 0.0
            var h1 = 0.0, hc = 0.0, hs = 0.0
            // cos/sin by rotation, re-anchored every 1024 samples so rounding cannot drift.
            let cw = cos(w), sw = sin(w)
            var c = 1.0, s = 0.0
            for n in 0..<x.count {
                if n & 1023 == 0 { c = cos(w * Double(n)); s = sin(w * Double(n)) }
                let v = x[n]
                s11 += 1; s1c += c; s1s += s; scc += c * c; scs += c * s; sss += s * s
                h1 += v; hc += v * c; hs += v * s
                (c, s) = (c * cw - s * sw, s * cw + c * sw)
            }
            g = [[s11, s1c, s1s], [s1c, scc, scs], [s1s, scs, sss]]
            h = [h1, hc, hs]
        }
        guard let coefficients = LeastSquares.solveSymmetric(g, h) else { return 0 }
        return coefficients[0] * h[0] + coefficients[1] * h[1] + coefficients[2] * h[2]
    }
}
