// Serialises FFTW plan creation and destruction, which FFTW does not allow from several threads at once.
import AudioGraphRealtime

import AudioGraphCore
import CFFTW

/// The one place that creates and destroys FFTW single-precision plans.
///
/// FFTW's planner is not thread-safe: only plan execution (`fftwf_execute_dft_r2c` and
/// `fftwf_execute_dft_c2r` on new arrays) may run concurrently. Every plan in the project is
/// made and destroyed here, under one process-wide lock, with `FFTW_ESTIMATE` so that plans (and
/// so outputs) do not depend on timing measurements.
///
/// Thread safety: callable from any control thread; it takes a lock, so never call it on the
/// render thread. The plans it returns are executed lock-free on any thread.
package enum FFTWPlanner {
    private static let lock = ControlLock(())

    /// A real-to-complex plan of `size` points (`size/2 + 1` complex outputs) for arrays with
    /// the alignment of `fftwf_malloc`.
    package static func makeRealForward(size: Int, input: UnsafeMutablePointer<Float>,
                                       output: UnsafeMutablePointer<Float>) -> OpaquePointer {
        // The plan crosses the lock's closure as an integer (raw pointers are not Sendable).
        let bits = lock.withLock { _ in
            output.withMemoryRebound(to: fftwf_complex.self, capacity: size / 2 + 1) { out in
                Int(bitPattern: fftwf_plan_dft_r2c_1d(Int32(size), input, out, UInt32(FFTW_ESTIMATE)))
            }
        }
        return OpaquePointer(bitPattern: bits)!
    }

    /// A complex-to-real plan of `size` points (unnormalised: the output is `size` times the
    /// inverse transform). It overwrites its input.
    package static func makeRealInverse(size: Int, input: UnsafeMutablePointer<Float>,
                                       output: UnsafeMutablePointer<Float>) -> OpaquePointer {
        let bits = lock.withLock { _ in
            input.withMemoryRebound(to: fftwf_complex.self, capacity: size / 2 + 1) { inp in
                Int(bitPattern: fftwf_plan_dft_c2r_1d(Int32(size), inp, output, UInt32(FFTW_ESTIMATE)))
            }
        }
        return OpaquePointer(bitPattern: bits)!
    }

    /// Destroys a plan made here.
    package static func destroy(_ plan: OpaquePointer) {
        lock.withLock { _ in fftwf_destroy_plan(plan) }
    }

    /// `count` floats from `fftwf_malloc`, zeroed (SIMD-aligned as FFTW's plans expect).
    package static func allocate(floats count: Int) -> UnsafeMutablePointer<Float> {
        let raw = fftwf_malloc(max(1, count) * MemoryLayout<Float>.stride)!
        let p = raw.bindMemory(to: Float.self, capacity: max(1, count))
        p.initialize(repeating: 0, count: max(1, count))
        return p
    }

    /// Frees memory from `allocate(floats:)`.
    package static func free(_ p: UnsafeMutablePointer<Float>) {
        fftwf_free(UnsafeMutableRawPointer(p))
    }

    /// Executes a real-to-complex plan on new arrays (thread-safe, real-time safe).
    @inline(__always)
    package static func forward(_ plan: OpaquePointer, _ input: UnsafeMutablePointer<Float>,
                               _ output: UnsafeMutablePointer<Float>, size: Int) {
        output.withMemoryRebound(to: fftwf_complex.self, capacity: size / 2 + 1) { out in
            fftwf_execute_dft_r2c(plan, input, out)
        }
    }

    /// Executes a complex-to-real plan on new arrays (thread-safe, real-time safe; overwrites
    /// `input`).
    @inline(__always)
    package static func inverse(_ plan: OpaquePointer, _ input: UnsafeMutablePointer<Float>,
                               _ output: UnsafeMutablePointer<Float>, size: Int) {
        input.withMemoryRebound(to: fftwf_complex.self, capacity: size / 2 + 1) { inp in
            fftwf_execute_dft_c2r(plan, inp, output)
        }
    }
}
