// CLOCK_MONOTONIC as numbers: deadlines and elapsed times without the concurrency runtime's clocks.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The monotonic clock (`CLOCK_MONOTONIC`, read through the vDSO: no system call, no lock, real-time
/// safe). The package's deadlines and elapsed times use it rather than `ContinuousClock`, which
/// lives in the concurrency runtime: linking that brings libdispatch and its start-up into every
/// executable, the `audiograph` command line's included (Docs/Performance.md).
///
/// Thread safety: stateless; any thread, the render thread included.
package enum MonotonicClock {
    /// Nanoseconds since an arbitrary start (the boot).
    @inline(__always)
    package static func nanoseconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) &* 1_000_000_000 &+ Int64(t.tv_nsec)
    }

    /// Seconds since an arbitrary start (the boot).
    package static func seconds() -> Double {
        Double(nanoseconds()) * 1e-9
    }
}
