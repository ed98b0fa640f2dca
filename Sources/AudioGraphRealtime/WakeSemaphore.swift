// A POSIX counting semaphore: lock-free posts, timed waits (render-thread wake-ups, the disk reader).
import Glibc

/// A POSIX semaphore (`sem_t`): `post()` is lock-free and async-signal-safe (an atomic increment
/// and, only if a thread sleeps, a futex wake). Uses: libpulse's mainloop thread posts it from a
/// callback to tell the PulseAudio render thread that ring-buffer space was freed (that thread
/// waits on it *between* slices, never inside a render call); a streaming player's disk reader
/// waits on one for work and posts another when data arrived.
///
/// Thread safety: any number of threads may `post()` and `wait(timeout:)` concurrently.
package final class WakeSemaphore: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    package init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Increments the count, waking one waiter. Real-time safe.
    @inline(__always)
    package func post() {
        sem_post(semaphore)
    }

    /// Waits until posted or `timeout` seconds passed. Returns true when posted.
    @discardableResult
    package func wait(timeout: Double) -> Bool {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let nanos = Int(ts.tv_nsec) + Int(timeout * 1e9)
        ts.tv_sec += nanos / 1_000_000_000
        ts.tv_nsec = nanos % 1_000_000_000
        while true {
            if sem_timedwait(semaphore, &ts) == 0 { return true }
            if errno != EINTR { return false }
        }
    }

    /// Consumes all pending posts without waiting.
    package func drain() {
        while sem_trywait(semaphore) == 0 {}
    }
}
