// The analyser's spectrum computation (Web Audio AnalyserNode): Blackman window, FFTW, smoothing, dB.
import CFFTW
import Glibc

/// The frequency analysis of the Web Audio specification's `AnalyserNode`, on one thread.
///
/// For a block `x[0..<N]` (N = `fftSize`): the Blackman window with α = 0.16,
/// `w[n] = 0.42 - 0.5 cos(2πn/N) + 0.08 cos(4πn/N)`; `X[k] = (1/N) Σ w[n] x[n] e^(-2πikn/N)`
/// (FFTW's real forward transform, divided by N); smoothing over time
/// `X̂[k] = τ X̂_prev[k] + (1 - τ) |X[k]|` (τ = `smoothingTimeConstant`, X̂_prev zero at first and
/// replaced by 0 when not finite); `Y[k] = 20 log10 X̂[k]` dB, for k in 0..<N/2.
///
/// Thread safety: not thread-safe; ``AnalyserNode`` keeps it under its reader lock. The plan is
/// made and destroyed through ``FFTWPlanner`` (never on the render thread).
final class AnalyserSpectrum {
    /// N.
    let fftSize: Int
    /// The windowed input of the transform (FFTW memory).
    private let input: UnsafeMutablePointer<Float>
    /// N/2 + 1 complex values, interleaved (FFTW memory).
    private let output: UnsafeMutablePointer<Float>
    private let plan: OpaquePointer
    private let window: [Float]
    /// X̂ of the last analysis.
    private(set) var smoothed: [Double]

    init(fftSize: Int) {
        self.fftSize = fftSize
        input = FFTWPlanner.allocate(floats: fftSize)
        output = FFTWPlanner.allocate(floats: fftSize + 2)
        plan = FFTWPlanner.makeRealForward(size: fftSize, input: input, output: output)
        let n = Double(fftSize)
        window = (0..<fftSize).map { i in
            let t = 2 * Double.pi * Double(i) / n
            return Float(0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t))
        }
        smoothed = [Double](repeating: 0, count: fftSize / 2)
    }

    deinit {
        FFTWPlanner.destroy(plan)
        FFTWPlanner.free(input)
        FFTWPlanner.free(output)
    }

    /// Analyses `frames` (N of them) and folds the result into ``smoothed`` with `tau`.
    func analyse(_ frames: UnsafePointer<Float>, smoothingTimeConstant tau: Double) {
        for i in 0..<fftSize { input[i] = frames[i] * window[i] }
        FFTWPlanner.forward(plan, input, output, size: fftSize)
        let scale = 1 / Double(fftSize)
        for k in 0..<fftSize / 2 {
            let re = Double(output[2 * k]), im = Double(output[2 * k + 1])
            let magnitude = (re * re + im * im).squareRoot() * scale
            let previous = smoothed[k].isFinite ? smoothed[k] : 0
            smoothed[k] = tau * previous + (1 - tau) * magnitude
        }
    }
}
