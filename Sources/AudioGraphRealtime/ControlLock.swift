// The project's one lock type: a Mutex that refuses (traps or counts) to be taken on a render thread.
import Synchronization

/// A mutual-exclusion lock around a value, for control threads only: the standard library's
/// `Mutex` plus the real-time check of ``RenderThreadMark``.
///
/// Every lock in the project is one of these, so "the render thread takes no lock" is checked
/// where it matters: a `ControlLock` taken on a thread marked as a render thread counts a
/// violation in ``RenderThreadMark/lockViolations`` and, in debug builds, traps at the call (Swift's
/// `Mutex` locks with an atomic compare-and-swap and a raw futex call on Linux, which no
/// `pthread_mutex_lock` interposer can see; this check can).
///
/// Thread safety: any control thread may call ``withLock(_:)``; it blocks while another thread
/// holds the lock. Never call it on a render thread (that is what the check reports). It is not
/// recursive: taking it again inside `body` on the same thread is a programming error.
package struct ControlLock<State: ~Copyable>: ~Copyable, Sendable {
    private let mutex: Mutex<State>
    /// Restates the lock's ordering in atomics compiled into this module. The standard library's
    /// `Mutex` is not built with ThreadSanitizer, so `make tsan` cannot see it order two critical
    /// sections and reports the guarded state as raced; an acquire load on entry and a release
    /// increment on exit (two uncontended atomics, control side only) make the order visible.
    private let handOff = Atomic<Int>(0)

    /// A lock guarding `initialValue`.
    package init(_ initialValue: consuming sending State) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with the lock held and the guarded value passed `inout`. Blocks while
    /// another thread holds the lock. Control threads only.
    @inline(__always)
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending State) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        RenderThreadMark.checkLockTaken()
        return try mutex.withLock { (state: inout sending State) throws(E) -> sending Result in
            _ = handOff.load(ordering: .acquiring)
            defer { handOff.wrappingAdd(1, ordering: .releasing) }
            return try body(&state)
        }
    }
}
