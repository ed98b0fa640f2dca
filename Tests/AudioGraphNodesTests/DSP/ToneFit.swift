// Test helper: least-squares fit of a sinusoid of known frequency (amplitude, residual, THD+N).

import Foundation

/// Result of fitting `dc + a*cos(w n) + b*sin(w n)` to a signal by least squares.
struct ToneFit {
    /// Fitted tone amplitude, hypot(a, b).
    var amplitude: Double
    /// Fitted phase of the sine form amplitude*sin(w n + phase).
    var phase: Double
    /// RMS of the fitted tone (amplitude / sqrt 2 over whole periods, computed exactly).
    var toneRMS: Double
    /// RMS of what the fit leaves (noise plus distortion).
    var residualRMS: Double
    /// THD+N in dB: residual RMS relative to the fitted tone's RMS.
    var thdPlusNoiseDB: Double { 20 * log10(max(residualRMS, 1e-300) / toneRMS) }

    /// Fits `x` (sample n at time n/sampleRate) with a DC term and a tone at `frequency`.
    init(_ x: [Double], sampleRate: Double, frequency: Double) {
        let w = 2 * Double.pi * frequency / sampleRate
        // Normal equations for the columns [1, cos, sin].
        var m = [[Double]](repeating: [0, 0, 0], count: 3)
        var r = [0.0, 0.0, 0.0]
        for (n, v) in x.enumerated() {
            let col = [1, cos(w * Double(n)), sin(w * Double(n))]
            for i in 0..<3 {
                r[i] += col[i] * v
                for j in 0..<3 { m[i][j] += col[i] * col[j] }
            }
        }
        let c = ToneFit.solve3(m, r)
        amplitude = (c[1] * c[1] + c[2] * c[2]).squareRoot()
        phase = atan2(c[1], c[2])
        var tone2 = 0.0, res2 = 0.0
        for (n, v) in x.enumerated() {
            let t = c[1] * cos(w * Double(n)) + c[2] * sin(w * Double(n))
            tone2 += t * t
            let e = v - c[0] - t
            res2 += e * e
        }
        toneRMS = (tone2 / Double(x.count)).squareRoot()
        residualRMS = (res2 / Double(x.count)).squareRoot()
    }

    /// Solves a 3x3 linear system by Gaussian elimination with partial pivoting.
    static func solve3(_ a0: [[Double]], _ b0: [Double]) -> [Double] {
        var a = a0, b = b0
        for col in 0..<3 {
            let p = (col..<3).max { abs(a[$0][col]) < abs(a[$1][col]) }!
            a.swapAt(col, p); b.swapAt(col, p)
            for row in (col + 1)..<3 {
                let f = a[row][col] / a[col][col]
                for k in col..<3 { a[row][k] -= f * a[col][k] }
                b[row] -= f * b[col]
            }
        }
        var x = [0.0, 0.0, 0.0]
        for row in stride(from: 2, through: 0, by: -1) {
            var s = b[row]
            for k in (row + 1)..<3 { s -= a[row][k] * x[k] }
            x[row] = s / a[row][row]
        }
        return x
    }
}

func db(_ x: Double) -> Double { 20 * log10(max(x, 1e-300)) }
