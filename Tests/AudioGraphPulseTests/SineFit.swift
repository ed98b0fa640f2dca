// Least-squares sine fit used by the PulseAudio tests to measure frequency and level.
import Foundation

/// The result of fitting `amplitude * sin(2π f n / rate + phase) + offset` to samples.
struct SineFit {
    var frequency: Double
    var amplitude: Double
    var phase: Double
    var offset: Double
    /// RMS of the residual (samples minus the fitted sine).
    var residualRMS: Double

    /// Fits a sine to `x`: the frequency starts from interpolated zero crossings, then a golden
    /// section search over ±0.5 Hz minimises the residual of the linear 3-parameter fit
    /// (sin, cos, constant — solved from its normal equations) at each candidate frequency.
    static func fit(_ x: [Float], sampleRate: Double) -> SineFit {
        let values = x.map(Double.init)
        let mean = values.reduce(0, +) / Double(values.count)
        var crossings: [Double] = []
        for n in 1..<values.count {
            let a = values[n - 1] - mean, b = values[n] - mean
            if a < 0 && b >= 0 { crossings.append(Double(n - 1) + a / (a - b)) }
        }
        precondition(crossings.count >= 2, "no periodic signal to fit")
        let estimate = Double(crossings.count - 1) / (crossings.last! - crossings.first!) * sampleRate
        var lo = estimate - 0.5, hi = estimate + 0.5
        let g = (sqrt(5.0) - 1) / 2
        var c = hi - g * (hi - lo), d = lo + g * (hi - lo)
        var fc = linearFit(values, frequency: c, sampleRate: sampleRate).residualRMS
        var fd = linearFit(values, frequency: d, sampleRate: sampleRate).residualRMS
        for _ in 0..<40 {
            if fc < fd { hi = d; d = c; fd = fc; c = hi - g * (hi - lo); fc = linearFit(values, frequency: c, sampleRate: sampleRate).residualRMS }
            else { lo = c; c = d; fc = fd; d = lo + g * (hi - lo); fd = linearFit(values, frequency: d, sampleRate: sampleRate).residualRMS }
        }
        return linearFit(values, frequency: (lo + hi) / 2, sampleRate: sampleRate)
    }

    /// The least-squares fit of `a sin + b cos + c` at a fixed frequency.
    static func linearFit(_ x: [Double], frequency: Double, sampleRate: Double) -> SineFit {
        let w = 2 * Double.pi * frequency / sampleRate
        var ss = 0.0, sc = 0.0, s1 = 0.0, cc = 0.0, c1 = 0.0
        var xs = 0.0, xc = 0.0, x1 = 0.0, energy = 0.0
        for n in 0..<x.count {
            let s = sin(w * Double(n)), c = cos(w * Double(n)), value = x[n]
            ss += s * s; sc += s * c; s1 += s; cc += c * c; c1 += c
            xs += s * value; xc += c * value; x1 += value; energy += value * value
        }
        let m = [[ss, sc, s1], [sc, cc, c1], [s1, c1, Double(x.count)]]
        let v = [xs, xc, x1]
        let beta = solve3(m, v)
        let residual = max(0, energy - (beta[0] * v[0] + beta[1] * v[1] + beta[2] * v[2]))
        return SineFit(frequency: frequency, amplitude: hypot(beta[0], beta[1]), phase: atan2(beta[1], beta[0]),
                       offset: beta[2], residualRMS: sqrt(residual / Double(x.count)))
    }

    /// Solves a 3×3 system by Gaussian elimination with partial pivoting.
    static func solve3(_ a: [[Double]], _ b: [Double]) -> [Double] {
        var m = a, y = b
        for col in 0..<3 {
            let pivot = (col..<3).max { abs(m[$0][col]) < abs(m[$1][col]) }!
            m.swapAt(col, pivot); y.swapAt(col, pivot)
            for row in (col + 1)..<3 {
                let f = m[row][col] / m[col][col]
                for k in col..<3 { m[row][k] -= f * m[col][k] }
                y[row] -= f * y[col]
            }
        }
        var x = [0.0, 0.0, 0.0]
        for row in stride(from: 2, through: 0, by: -1) {
            var s = y[row]
            for k in (row + 1)..<3 { s -= m[row][k] * x[k] }
            x[row] = s / m[row][row]
        }
        return x
    }
}
