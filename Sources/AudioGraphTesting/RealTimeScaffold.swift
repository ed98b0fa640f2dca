// The real-time tests' one scaffold: run render calls marked and counted, and say what they allocated, locked or waited on.
import AudioGraphCore
import AudioGraphRealtime
import CAllocationCounter
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs code as a render thread runs it — marked (``RenderThreadMark``, so a ``ControlLock`` taken
/// counts) and tracked by the test-only interposer `CAllocationCounter` (allocations, frees,
/// `pthread_mutex_lock`, and the futex waits of a contended Swift `Mutex`) — and reports what it
/// counted. Every real-time test uses it, in one of two shapes:
///
/// * ``count(_:)`` around each render call made on the test thread (the test changes parameters
///   between calls);
/// * ``runRenderThread(warmUp:render:whileRendering:)``: a tracked render thread renders while
///   the test thread makes changes, the case a live engine is in.
///
/// Either shape counts the threads of offline renders too — render workers and a kernel's
/// helper thread (`RenderHelperThread`) — when the graph is made inside
/// ``countingHelperThreads(helpersRunEveryJob:_:)``.
///
/// The scaffold can fail: `RealTimeScaffoldTests` proves that one `ControlLock`, one raw Swift
/// `Mutex` held by another thread, one `pthread_mutex_lock` and one `malloc` on the render thread
/// each count, and `RealTimeSafetyTests.testScaffoldCatchesALockAndAnAllocationAddedToTheRenderPath`
/// that a render path broken on purpose is caught.
///
/// While counting, a `ControlLock` on a marked thread is counted rather than trapped
/// (``RenderThreadMark/trapsOnViolation`` is set to false, and restored afterwards).
///
/// Thread safety: the counters are process-wide; run one counting test at a time (XCTest runs
/// tests one after another). Under `make tsan` nothing but control locks can be counted
/// (``isCounting`` is false): the scenarios still run, and ``Counts/violation`` then looks at
/// control locks only.
public enum RealTimeScaffold {
    /// What code on a tracked, marked thread did.
    public struct Counts: Equatable, Sendable, CustomStringConvertible {
        public var allocations: UInt64 = 0
        public var frees: UInt64 = 0
        /// `pthread_mutex_lock`/`trylock` calls (NSLock, Dispatch, libc and the C libraries use them).
        public var locks: UInt64 = 0
        /// Futex waits and lock hand-overs through `syscall(2)` (a contended Swift `Mutex`).
        public var waits: UInt64 = 0
        /// ``ControlLock``s taken on the marked thread.
        public var controlLocks: Int = 0

        public init() {}

        /// Adds another run's counts.
        public static func += (a: inout Counts, b: Counts) {
            a.allocations += b.allocations; a.frees += b.frees; a.locks += b.locks
            a.waits += b.waits; a.controlLocks += b.controlLocks
        }

        /// Whether anything was counted (only control locks where the interposer cannot count).
        public var isEmpty: Bool { violation == nil }

        /// One line naming what was counted, or nil when the code allocated, freed, locked and
        /// waited on nothing.
        public var violation: String? {
            let counted = RealTimeScaffold.isCounting
            let found = controlLocks > 0 || (counted && allocations + frees + locks + waits > 0)
            return found ? "the render thread did what it must not: \(self)" : nil
        }

        public var description: String {
            "\(allocations) allocations, \(frees) frees, \(locks) pthread mutex locks, \(waits) futex waits, "
                + "\(controlLocks) control locks"
        }
    }

    /// False under ThreadSanitizer/AddressSanitizer (`make tsan`), where the sanitizer owns malloc
    /// and the interposer steps aside: only control locks are counted then.
    public static var isCounting: Bool { ag_counter_is_sanitized() == 0 }

    /// True when the interposer is linked into the process and sees malloc calls (a real-time
    /// test asserts it, so that it cannot pass by counting nothing).
    public static var interposerIsActive: Bool { ag_counter_is_active() == 1 }

    /// Runs `body` on the calling thread, marked and tracked, and returns its result with what
    /// it counted. Nothing else may be counting meanwhile.
    public static func count<R>(_ body: () throws -> R) rethrows -> (result: R, counts: Counts) {
        let saved = RenderThreadMark.trapsOnViolation
        RenderThreadMark.trapsOnViolation = false
        defer { RenderThreadMark.trapsOnViolation = saved }
        reset()
        let wasMarked = RenderThreadMark.isCurrentThreadMarked
        RenderThreadMark.markCurrentThread(true)
        ag_counter_track_this_thread(1)
        let result: R
        do {
            result = try body()
        } catch {
            ag_counter_track_this_thread(0)
            RenderThreadMark.markCurrentThread(wasMarked)
            throw error
        }
        ag_counter_track_this_thread(0)
        RenderThreadMark.markCurrentThread(wasMarked)
        return (result, current())
    }

    /// Starts a render thread that runs `warmUp` (neither marked nor tracked: first-touch work),
    /// then `render` marked and tracked; meanwhile calls `whileRendering` with step 1, 2, … on
    /// this thread until `render` has returned, then joins the thread and returns what the
    /// render thread counted and the number of steps made. `render`'s result comes back too.
    public static func runRenderThread<R: Sendable>(
        warmUp: @escaping @Sendable () -> Void = {},
        render: @escaping @Sendable () -> R,
        whileRendering control: (Int) throws -> Void
    ) rethrows -> (result: R, counts: Counts, steps: Int) {
        let saved = RenderThreadMark.trapsOnViolation
        RenderThreadMark.trapsOnViolation = false
        defer { RenderThreadMark.trapsOnViolation = saved }
        let box = ResultBox<R>()
        let finished = Atomic<Bool>(false)
        let mayStart = Atomic<Bool>(false)
        reset()
        let thread: PosixThread
        do {
            thread = try PosixThread(name: "ag-test-render") {
                while !mayStart.load(ordering: .acquiring) { sched_yield() }
                warmUp()
                RenderThreadMark.markCurrentThread(true)
                ag_counter_track_this_thread(1)
                let result = render()
                ag_counter_track_this_thread(0)
                RenderThreadMark.markCurrentThread(false)
                box.value = result
                finished.store(true, ordering: .releasing)
            }
        } catch {
            preconditionFailure("the scaffold could not start its render thread: \(error)")
        }
        mayStart.store(true, ordering: .releasing)
        defer { thread.join() }   // also when `control` throws: the render ends by itself
        var step = 0
        while !finished.load(ordering: .acquiring) {
            step += 1
            try control(step)
        }
        thread.join()
        return (box.value!, current(), step)
    }

    /// Runs `body` with every render helper thread (`RenderHelperThread`: the convolver's second
    /// output, `timePitch`'s channels 1…) and render worker thread started meanwhile tracked from
    /// its start to its end, so that what it allocates or locks counts with the render thread's in
    /// ``count(_:)`` and ``runRenderThread(warmUp:render:whileRendering:)``. With
    /// `helpersRunEveryJob` the helpers run every job posted to them (the render thread waits
    /// rather than running them itself), so that the helper's thread is the one counted whatever
    /// the machine's load. Initialize the graph inside `body`: a thread started before is not
    /// tracked. Test thread; one at a time.
    public static func countingHelperThreads<R>(helpersRunEveryJob: Bool = true, _ body: () throws -> R) rethrows -> R {
        RenderHelperThread.testOnly_setThreadHook { on in RealTimeScaffold.trackCurrentThread(on) }
        let saved = RenderHelperThread.testOnly_helperRunsEveryJob.load(ordering: .relaxed)
        RenderHelperThread.testOnly_helperRunsEveryJob.store(helpersRunEveryJob, ordering: .relaxed)
        defer {
            RenderHelperThread.testOnly_setThreadHook(nil)
            RenderHelperThread.testOnly_helperRunsEveryJob.store(saved, ordering: .relaxed)
        }
        return try body()
    }

    /// ``runRenderThread(warmUp:render:whileRendering:)`` with nothing to do meanwhile.
    public static func runRenderThread<R: Sendable>(warmUp: @escaping @Sendable () -> Void = {},
                                                    render: @escaping @Sendable () -> R) -> (result: R, counts: Counts) {
        let run = runRenderThread(warmUp: warmUp, render: render, whileRendering: { _ in usleep(1000) })
        return (run.result, run.counts)
    }

    /// Runs `body` on a new thread, tracked (`tracked`) or not, never marked, and joins it;
    /// with `callerTracksMeanwhile` the calling thread is tracked from before the new thread
    /// starts `body` until it has joined it. What the interposer itself is tested with.
    public static func runOnNewThread(tracked: Bool, callerTracksMeanwhile: Bool = false,
                                      _ body: @escaping @Sendable () -> Void) {
        let mayStart = Atomic<Bool>(false)
        let thread: PosixThread
        do {
            thread = try PosixThread(name: "ag-test-thread") {
                while !mayStart.load(ordering: .acquiring) { sched_yield() }
                ag_counter_track_this_thread(tracked ? 1 : 0)
                body()
                ag_counter_track_this_thread(0)
            }
        } catch {
            preconditionFailure("could not start a test thread: \(error)")
        }
        if callerTracksMeanwhile { ag_counter_track_this_thread(1) }
        mayStart.store(true, ordering: .releasing)
        thread.join()
        if callerTracksMeanwhile { ag_counter_track_this_thread(0) }
    }

    /// Sets the interposer's counters and (unless `controlLocks` is false)
    /// ``RenderThreadMark/lockViolations`` to zero.
    public static func reset(controlLocks: Bool = true) {
        ag_counter_reset()
        if controlLocks { RenderThreadMark.resetLockViolations() }
    }

    /// The counters now.
    public static func current() -> Counts {
        var c = Counts()
        c.allocations = ag_counter_allocations()
        c.frees = ag_counter_frees()
        c.locks = ag_counter_locks()
        c.waits = ag_counter_waits()
        c.controlLocks = RenderThreadMark.lockViolations
        return c
    }

    /// Starts (true) or stops counting on the calling thread, for code the shapes above do not fit.
    public static func trackCurrentThread(_ on: Bool) { ag_counter_track_this_thread(on ? 1 : 0) }

    private final class ResultBox<R>: @unchecked Sendable {
        var value: R?
    }
}
