// Marks the threads that render (a thread-local flag) and counts control locks taken on them.
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The mark on the threads that render (a thread-specific flag), and what the real-time check
/// found on them. It is not a thread: ``PosixThread`` starts threads.
///
/// Every driver marks the thread that calls ``AudioGraph/render(frameCount:)`` for as long as it
/// renders: the PulseAudio playback stream's render thread for its whole life, `OfflineRenderer`
/// around each render call, the real-time tests' tracked threads. Every lock the project takes
/// is a ``ControlLock``, and a ``ControlLock`` taken on a marked thread is a real-time violation:
/// it is counted in ``lockViolations`` and, when ``trapsOnViolation`` is true (the default in
/// debug builds), stops the process at the offending call. A test that sets
/// ``trapsOnViolation`` to false reads the count instead (the real-time tests assert 0, and
/// prove that a deliberately taken lock counts 1).
///
/// The flag is a POSIX thread-specific value: reading it neither allocates nor locks.
///
/// Thread safety: `markCurrentThread` affects the calling thread only; the counter and the trap
/// switch are atomics any thread may read and set. Real-time safe: ``isCurrentThreadMarked``,
/// ``markCurrentThread(_:)`` (once the key exists, i.e. after the first call on any thread).
package enum RenderThreadMark {
    /// Marks (`true`) or unmarks (`false`) the calling thread as a render thread.
    package static func markCurrentThread(_ marked: Bool) {
        _ = pthread_setspecific(key.value, marked ? UnsafeRawPointer(bitPattern: 1) : nil)
    }

    /// Whether the calling thread is marked as a render thread.
    @inline(__always)
    package static var isCurrentThreadMarked: Bool { pthread_getspecific(key.value) != nil }

    /// Runs `body` with the calling thread marked as a render thread (restoring the mark it had).
    @inline(__always)
    package static func whileMarked<R>(_ body: () throws -> R) rethrows -> R {
        let was = isCurrentThreadMarked
        if !was { markCurrentThread(true) }
        defer { if !was { markCurrentThread(false) } }
        return try body()
    }

    /// Control locks taken on marked threads since the process started (or the last reset).
    package static var lockViolations: Int { violations.load(ordering: .relaxed) }

    /// Sets ``lockViolations`` back to zero.
    package static func resetLockViolations() { violations.store(0, ordering: .relaxed) }

    /// Whether a violation stops the process (true by default in debug builds, false in release
    /// builds, where violations are only counted). Tests that count set it to false.
    package static var trapsOnViolation: Bool {
        get { trapping.load(ordering: .relaxed) }
        set { trapping.store(newValue, ordering: .relaxed) }
    }

    /// Called by ``ControlLock`` before it locks: counts (and maybe traps) on a marked thread.
    @inline(__always)
    static func checkLockTaken() {
        guard isCurrentThreadMarked else { return }
        violations.wrappingAdd(1, ordering: .relaxed)
        if trapping.load(ordering: .relaxed) {
            preconditionFailure("a ControlLock was taken on a render thread (real-time violation)")
        }
    }

    // MARK: Shared (atomic)
    private static let violations = Atomic<Int>(0)
    #if DEBUG
    private static let trapping = Atomic<Bool>(true)
    #else
    private static let trapping = Atomic<Bool>(false)
    #endif

    /// The thread-specific key holding the mark (created once, never deleted).
    private final class Key: Sendable {
        let value: pthread_key_t
        init() {
            var k = pthread_key_t()
            precondition(pthread_key_create(&k, nil) == 0, "pthread_key_create failed")
            value = k
        }
    }
    private static let key = Key()
}
