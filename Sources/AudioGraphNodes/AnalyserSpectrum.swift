// The analyser's spectrum computation (Web Audio AnalyserNode): Blackman window, FFTW, smoothing, dB.
import Glibc

/// The frequency analysis of the Web Audio specification's `AnalyserNode`, on one thread.
///
/// For a block `x[0..<N]` (N = `fftSize`): the Blackman window with α = 0.16,
/// `w[n] = 0.42 - 0.5 cos(2πn/N) + 0.08 cos(4πn/N)`; `X[k] = (1/N) Σ w[n] x[n] e^(-2πikn/N)`
/// (FFTW's real forward transform, divided by N); smoothing over time
/// `X̂[k] = τ X̂_prev[k] + (1 - τ) |X[k]|` (τ = `smoothingTimeConstant`, X̂_prev zero at first and
/// replaced by 0 when not finite); `Y[k] = 20 log10 X̂[k]` dB, for k in 0..<N/2.
///
/// Thread safety: not thread-safe; ``AnalyserNode`` keeps it under its reader lock. The
/// transform (a ``RealForwardFFT``) is made and released on control threads, never the render thread.
final class AnalyserSpectrum {
    /// N.
    let fftSize: Int
    /// The transform of the windowed block.
    private let fft: RealForwardFFT
    private let window: [Float]
    /// X̂ of the last analysis.
    private(set) var smoothed: [Double]

    init(fftSize: Int) {
        self.fftSize = fftSize
        fft = RealForwardFFT(size: fftSize)
        let n = Double(fftSize)
        window = (0..<fftSize).map { i in
            let t = 2 * Double.pi * Double(i) / n
            return Float(0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t))
        }
        smoothed = [Double](repeating: 0, count: fftSize / 2)
    }

    /// Analyses `frames` (N of them) and folds the result into ``smoothed`` with `tau`.
    func analyse(_ frames: UnsafePointer<Float>, smoothingTimeConstant tau: Double) {
        let input = fft.input, output = fft.output
        for i in 0..<fftSize { input[i] = frames[i] * window[i] }
        fft.transform()
        let scale = 1 / Double(fftSize)
        for k in 0..<fftSize / 2 {
            let re = Double(output[2 * k]), im = Double(output[2 * k + 1])
            let magnitude = (re * re + im * im).squareRoot() * scale
            let previous = smoothed[k].isFinite ? smoothed[k] : 0
            smoothed[k] = tau * previous + (1 - tau) * magnitude
        }
    }
}
