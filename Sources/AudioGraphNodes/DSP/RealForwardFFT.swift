// A real-to-complex FFT of one size with its own FFTW buffers and plan (the analyser's, the plot's and the HRTF set's spectra).
import CFFTW

/// FFTW's real forward transform of `size` points, `X[k] = Σ x[n] e^(-2πikn/size)` for
/// k in 0...size/2 (unscaled), with the buffers it reads and writes: fill ``input``, call
/// ``transform()``, read ``output``. The buffers come from `fftwf_malloc` and the plan from
/// ``FFTWPlanner``, both released when the object goes.
///
/// Thread safety: not thread-safe (one user at a time). Making and releasing it take the
/// planner's lock: never on the render thread. ``transform()`` itself is lock-free and does
/// not allocate.
package final class RealForwardFFT {
    /// The number of real input points.
    package let size: Int
    /// The `size` real inputs.
    package let input: UnsafeMutablePointer<Float>
    /// The `size/2 + 1` complex outputs, interleaved: `output[2k]` is Re X[k], `output[2k+1]` Im X[k].
    package let output: UnsafeMutablePointer<Float>
    private let plan: OpaquePointer

    /// A transform of `size` points (even, at least 2), its buffers zeroed.
    package init(size: Int) {
        precondition(size >= 2 && size % 2 == 0, "RealForwardFFT: size \(size) must be even and at least 2")
        self.size = size
        input = FFTWPlanner.allocate(floats: size)
        output = FFTWPlanner.allocate(floats: size + 2)
        plan = FFTWPlanner.makeRealForward(size: size, input: input, output: output)
    }

    deinit {
        FFTWPlanner.destroy(plan)
        FFTWPlanner.free(input)
        FFTWPlanner.free(output)
    }

    /// Transforms ``input`` into ``output`` (``input`` is left as it was).
    package func transform() {
        FFTWPlanner.forward(plan, input, output, size: size)
    }
}
