// A second thread a kernel hands jobs of its own render to: the render thread posts them, later collects them (offline renders only).
import AudioGraphRealtime
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One thread that runs jobs a kernel's render hands it while the render thread does the rest of
/// its slice: the convolver's second output channel (one job per slice), the `timePitch` node's
/// mono stretchers of channels 1… (one job per 256-frame block, several per slice). The render
/// thread *posts* jobs (``post(_:)``: an argument for the kernel's fixed `job` closure) and later
/// *collects* them (``collect()``: returns when every job posted so far has run). Jobs run one at
/// a time, in the order they were posted, each exactly once, so a job may continue the state the
/// one before left (a stretcher fed block after block).
///
/// **Who runs a job.** Whoever runs jobs holds the *baton*, an atomic flag taken by
/// compare-and-swap; the holder runs the next posted job, marks it completed and gives the baton
/// back. The helper takes it whenever it wakes to posted jobs. In ``collect()`` the render thread
/// takes it too, when it is free, and runs the jobs the helper has not started — the helper may
/// be asleep, or off its core on a loaded machine — so it never waits for a thread that is not
/// running; it waits only for a job the helper is in the middle of. Whoever runs it, a job is the
/// same code on the same data, so the results are the same bits.
///
/// **The bounded spin and the handshake.** ``post(_:)`` posts the helper's start semaphore. The
/// helper spins on it (`sem_trywait`, no system call) for up to ``helperSpinNanoseconds`` (50 µs:
/// longer than the rest of a slice usually takes, so it is awake for the next slice's job, as a
/// futex wake-up costs tens of microseconds) and then sleeps (`sem_wait`). The render thread, in
/// ``collect()`` while the helper runs a job, spins on the count of completed jobs for up to
/// ``collectSpinNanoseconds`` (0.3 ms) and then sleeps on its done semaphore: it sets a *waiting*
/// flag, checks again that the helper holds the baton with a job left, and sleeps; the helper,
/// each time it gives the baton back, clears the flag and posts the semaphore when it was set
/// (sequentially consistent atomics: exactly one post per sleep, none lost, none left over).
///
/// **Memory.** The render thread's writes before ``post(_:)`` are visible to the job (the posted
/// count is stored with release, loaded with acquire by the baton holder); the baton's acquire and
/// release order one job's memory before the next's; what a job wrote is visible after
/// ``collect()`` (the completed count). Nothing is allocated and no lock is taken after `init`.
/// ``collect()`` may *wait* for a running job, which is why only offline renders use a helper:
/// a kernel starts one when the graph's render thread count is above 1 (which live drivers
/// refuse; ``NodeKernel/renderThreadCountDidChange(_:)``), the same rule as ``RenderWorkerPool``'s.
///
/// Thread safety: `init` and `deinit` on a control thread (deinit stops and joins the thread; no
/// render may be in progress and every posted job collected). ``post(_:)``, ``collect()`` and
/// ``isFull``: the thread rendering the kernel, one at a time. Jobs run on the helper or inside
/// ``collect()`` (and ``post(_:)`` when it is full). ``jobsRun``: any thread.
package final class RenderHelperThread: @unchecked Sendable {
    /// What the render thread and the helper share.
    private final class Shared: @unchecked Sendable {
        let start: UnsafeMutablePointer<sem_t>
        let done: UnsafeMutablePointer<sem_t>
        let job: (Int) -> Void
        let capacity: Int
        /// Job `n`'s argument at `n % capacity`, written before `posted` counts it.
        let arguments: UnsafeMutablePointer<Int>
        /// Jobs posted (the render thread writes), jobs completed (the baton holder writes).
        let posted = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        /// Held by the thread running a job.
        let baton = Atomic<Bool>(false)
        /// The render thread sleeps on `done` until the helper gives the baton back.
        let renderWaiting = Atomic<Bool>(false)
        let stopRequested = Atomic<Bool>(false)
        /// Jobs the helper ran (a diagnostic: proves it took part).
        let jobsRun = Atomic<Int>(0)

        init(capacity: Int, job: @escaping (Int) -> Void) {
            self.job = job
            self.capacity = capacity
            arguments = .allocate(capacity: capacity)
            arguments.initialize(repeating: 0, count: capacity)
            start = .allocate(capacity: 1)
            sem_init(start, 0, 0)
            done = .allocate(capacity: 1)
            sem_init(done, 0, 0)
        }

        deinit {
            arguments.deallocate()
            sem_destroy(start)
            start.deallocate()
            sem_destroy(done)
            done.deallocate()
        }

        /// Takes the baton when it is free and runs the next posted job: `.ran`; `.idle` when no
        /// job is left, `.busy` when the other thread holds the baton.
        @inline(__always)
        func runNext(onHelper: Bool) -> RunResult {
            guard baton.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return .busy }
            let n = completed.load(ordering: .relaxed)
            var result = RunResult.idle
            if n < posted.load(ordering: .acquiring) {
                job(arguments[n % capacity])
                if onHelper { jobsRun.wrappingAdd(1, ordering: .relaxed) }
                completed.store(n + 1, ordering: .sequentiallyConsistent)
                result = .ran
            }
            baton.store(false, ordering: .sequentiallyConsistent)
            // The render thread may be asleep in collect() waiting for this job: wake it once.
            if onHelper && renderWaiting.load(ordering: .sequentiallyConsistent)
                && renderWaiting.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged {
                sem_post(done)
            }
            return result
        }
    }

    private enum RunResult { case ran, idle, busy }

    /// How long the helper spins for its next job before it sleeps (nanoseconds): longer than
    /// the rest of a slice usually takes (file I/O, the other nodes), so that it is awake when
    /// the next slice hands it a job (a futex wake-up takes tens of microseconds, as long as a
    /// fair part of a job), short enough to sleep while the render is paused.
    package static let helperSpinNanoseconds: Int64 = 50_000
    /// How long the render thread, in ``collect()``, spins for a job the helper is running
    /// before it sleeps (nanoseconds).
    package static let collectSpinNanoseconds: Int64 = 300_000

    /// The monotonic clock in nanoseconds (vDSO: no system call). Real-time safe.
    @inline(__always)
    private static func now() -> Int64 { MonotonicClock.nanoseconds() }

    private let shared: Shared
    private var thread: PosixThread?

    // MARK: Render thread only
    /// Jobs posted so far.
    private var posted = 0

    /// Starts the thread (named `name`) that will run `job(argument)` for each ``post(_:)``, at
    /// most `capacity` jobs posted and not yet run. Control thread (allocates). Throws when the
    /// system refuses a thread: the kernel then runs its jobs itself.
    package init(name: String, capacity: Int = 1, job: @escaping (Int) -> Void) throws(PosixThread.StartError) {
        precondition(capacity >= 1, "a render helper holds at least one job")
        let s = Shared(capacity: capacity, job: job)
        shared = s
        let hook = RenderWorkerPool.testOnly_workerThreadHook.withLock { $0 }
        thread = try PosixThread(name: name) { [s] in RenderHelperThread.loop(s, hook) }
    }

    deinit {
        shared.stopRequested.store(true, ordering: .releasing)
        sem_post(shared.start)
        thread?.join()
    }

    /// Tests only: when true, ``collect()`` never runs a job itself, it waits for the helper to
    /// run it — so that a test can prove the helper's results are the serial ones, and count the
    /// helper's allocations and locks, whatever the machine's load (on a loaded machine the
    /// render thread may otherwise run every job itself).
    package static let testOnly_helperRunsEveryJob = Atomic<Bool>(false)

    /// Tests: `hook` is called on every render helper thread and render worker thread started
    /// from now on, with true as it starts and false before it ends (the real-time scaffold turns
    /// its counting on there: `RealTimeScaffold.countingHelperThreads`); nil: none. Control thread.
    package static func testOnly_setThreadHook(_ hook: (@Sendable (Bool) -> Void)?) {
        RenderWorkerPool.testOnly_workerThreadHook.withLock { $0 = hook }
    }

    /// Jobs the helper (not the render thread) has run so far. Any thread.
    package var jobsRun: Int { shared.jobsRun.load(ordering: .relaxed) }

    /// The most jobs posted and not yet run.
    package var capacity: Int { shared.capacity }

    /// Whether `capacity` jobs are posted and not yet run: the next ``post(_:)`` collects them
    /// first. Render thread.
    @inline(__always)
    package var isFull: Bool { posted - shared.completed.load(ordering: .acquiring) >= shared.capacity }

    /// Hands the helper a job: `job(argument)`, after the jobs posted before it. When ``isFull``
    /// it first collects those (``collect()``). Render thread; allocates nothing, takes no lock.
    @inline(__always)
    package func post(_ argument: Int) {
        if isFull { collect() }
        shared.arguments[posted % shared.capacity] = argument
        posted += 1
        shared.posted.store(posted, ordering: .releasing)
        sem_post(shared.start)
    }

    /// Returns when every job posted so far has run: runs those the helper has not started here,
    /// waits (the bounded spin, then the handshake) for one it is running. Render thread;
    /// allocates nothing, takes no lock; may wait (offline only).
    @inline(__always)
    package func collect() {
        let s = shared, target = posted
        let helperOnly = Self.testOnly_helperRunsEveryJob.load(ordering: .relaxed)
        var deadline: Int64 = 0
        var spins = 0
        while s.completed.load(ordering: .acquiring) < target {
            if !helperOnly && !s.baton.load(ordering: .relaxed) && s.runNext(onHelper: false) != .busy { continue }
            // The helper is running a job on the other core: spin (checking the clock every 64 loads).
            spins += 1
            if spins & 63 != 0 { continue }
            if deadline == 0 { deadline = Self.now() + Self.collectSpinNanoseconds; continue }
            if Self.now() < deadline { continue }
            // Then sleep until the helper gives the baton back (each pass of the loop sleeps once).
            s.renderWaiting.store(true, ordering: .sequentiallyConsistent)
            let left = s.completed.load(ordering: .sequentiallyConsistent) < target
            if !left || (!helperOnly && !s.baton.load(ordering: .sequentiallyConsistent)) {
                // Nothing to sleep for: withdraw, or, when the helper took the flag, take its post.
                if !s.renderWaiting.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged {
                    while sem_wait(s.done) != 0 {}
                }
                continue
            }
            while sem_wait(s.done) != 0 {}
        }
    }

    private static func loop(_ s: Shared, _ hook: (@Sendable (Bool) -> Void)?) {
        RenderThreadMark.markCurrentThread(true)
        hook?(true)
        while true {
            let deadline = now() + helperSpinNanoseconds
            var spins = 0
            while sem_trywait(s.start) != 0 {
                spins += 1
                if spins & 63 == 0 && now() > deadline {
                    while sem_wait(s.start) != 0 {}
                    break
                }
            }
            if s.stopRequested.load(ordering: .acquiring) { break }
            // Every job posted and not yet run (one post per job: later wake-ups may find none).
            while s.runNext(onHelper: true) == .ran {}
        }
        hook?(false)
        RenderThreadMark.markCurrentThread(false)
    }
}
