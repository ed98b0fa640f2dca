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
    /// First a rough value from the upward zero crossings of the signal less its mean (linearly
    /// interpolated between samples), then refined by maximising the energy that a least-squares
    /// fit of DC + cos + sin at the trial frequency explains: a grid over ±2 % (at least ±3 bins
    /// of sampleRate/N) around the rough value, then a golden-section search around the best grid
    /// point. For a clean sine the result is exact to about 1e-6 Hz; noise and other tones bias
    /// it only as much as they move the fit's maximum. Returns nil when the signal has fewer than
    /// two upward zero crossings.
    public static func estimateFrequency<S: Collection>(_ samples: S, sampleRate: Double) -> Double?
    where S.Element: BinaryFloatingPoint {
        let x = samples.map { Double($0) }
        let dc = mean(x)
        var firstCrossing: Double?
        var lastCrossing = 0.0
        var crossings = 0
        for n in 1..<max(1, x.count) {
            let previous = x[n - 1] - dc, current = x[n] - dc
            if previous < 0 && current >= 0 {
                let t = Double(n - 1) + previous / (previous - current)
                if firstCrossing == nil { firstCrossing = t }
                lastCrossing = t
                crossings += 1
            }
        }
        guard let first = firstCrossing, crossings >= 2, lastCrossing > first else { return nil }
        let rough = Double(crossings - 1) * sampleRate / (lastCrossing - first)

        let energy = { (frequency: Double) -> Double in fittedEnergy(x, frequency: frequency, sampleRate: sampleRate) }
        let halfWidth = max(0.02 * rough, 3 * sampleRate / Double(x.count))
        let low = max(1e-9, rough - halfWidth), high = min(sampleRate / 2, rough + halfWidth)
        guard low < high else { return rough }
        let steps = 80
        let step = (high - low) / Double(steps)
        var bestFrequency = low
        var bestEnergy = -Double.infinity
        for i in 0...steps {
            let frequency = low + Double(i) * step
            let e = energy(frequency)
            if e > bestEnergy { bestEnergy = e; bestFrequency = frequency }
        }
        // Golden-section search for the maximum within one grid step either side.
        let ratio = (5.0.squareRoot() - 1) / 2
        var a = max(low, bestFrequency - step), b = min(high, bestFrequency + step)
        var c = b - ratio * (b - a), d = a + ratio * (b - a)
        var ec = energy(c), ed = energy(d)
        for _ in 0..<60 where b - a > 1e-9 * max(1, bestFrequency) {
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
            for n in 0..<x.count {
                let phase = w * Double(n)
                let c = cos(phase), s = sin(phase), v = x[n]
                s11 += 1; s1c += c; s1s += s; scc += c * c; scs += c * s; sss += s * s
                h1 += v; hc += v * c; hs += v * s
            }
            g = [[s11, s1c, s1s], [s1c, scc, scs], [s1s, scs, sss]]
            h = [h1, hc, hs]
        }
        guard let coefficients = LeastSquares.solveSymmetric(g, h) else { return 0 }
        return coefficients[0] * h[0] + coefficients[1] * h[1] + coefficients[2] * h[2]
    }
}
