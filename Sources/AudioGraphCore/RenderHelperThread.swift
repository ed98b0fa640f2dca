// A second thread one kernel hands part of its own slice to (offline parallel rendering only).
import AudioGraphRealtime
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One thread that runs a kernel's fixed job once per slice while the kernel's render does the
/// rest of the slice, for a kernel whose work splits into independent halves (the convolver's
/// output channels). The kernel makes it when ``NodeKernel/renderThreadCountDidChange(_:)`` says
/// the graph renders on more than one thread (offline only) and releases it when the count
/// returns to 1.
///
/// Per slice: ``begin(_:)`` stores the argument, marks the job *posted* and posts the helper's
/// semaphore; the helper, which spins on it (`sem_trywait`) for up to 50 µs after each job and
/// then sleeps (`sem_wait`), *claims* the job (compare-and-swap posted → claimed) before running
/// it. ``finish()``, after the render thread's own half, tries the same claim: when the helper
/// has not taken the job yet (it was asleep or off its core, as on a loaded machine) the render
/// thread runs the job itself and waits for nothing; otherwise it spins on the done state (up to
/// 0.3 ms, then sleeps) and consumes the semaphore the helper posts after its job. Whoever runs
/// it, the job is the same code on the same data, so the results are the same bits. POSIX
/// semaphores and the claim's acquire/release order memory: what the render thread wrote before
/// ``begin(_:)`` is visible to the job, what the job wrote is visible after ``finish()``.
/// Nothing is allocated and no lock is taken; ``finish()`` may *wait* for a job the helper is
/// running, which is why only offline renders (render thread count above 1, which live drivers
/// refuse) use one, the same rule as ``RenderWorkerPool``'s.
///
/// Thread safety: `init` and `deinit` on a control thread (deinit stops and joins the thread;
/// no render may be in progress). ``begin(_:)`` and ``finish()``: the thread rendering the
/// kernel, in pairs, one pair at a time. The job runs on the helper or inside ``finish()``.
package final class RenderHelperThread: @unchecked Sendable {
    private final class Shared: @unchecked Sendable {
        let start: UnsafeMutablePointer<sem_t>
        let done: UnsafeMutablePointer<sem_t>
        let job: (Int) -> Void
        /// Written before `start` is posted, read by the helper after its wait.
        var argument = 0
        /// ``JobState`` raw value.
        let state = Atomic<Int>(JobState.idle)
        let stopRequested = Atomic<Bool>(false)
        /// Jobs the helper ran (a diagnostic: proves it took part).
        let jobsRun = Atomic<Int>(0)

        init(job: @escaping (Int) -> Void) {
            self.job = job
            start = .allocate(capacity: 1)
            sem_init(start, 0, 0)
            done = .allocate(capacity: 1)
            sem_init(done, 0, 0)
        }

        deinit {
            sem_destroy(start)
            start.deallocate()
            sem_destroy(done)
            done.deallocate()
        }
    }

    /// The job's state: idle (none, or taken by the render thread), posted, claimed by the
    /// helper, done by the helper.
    private enum JobState {
        static let idle = 0, posted = 1, claimed = 2, done = 3
    }

    /// How long the helper spins for its next job before it sleeps (nanoseconds): longer than
    /// the rest of a slice usually takes (file I/O, the other nodes), so that it is awake when
    /// the next slice hands it a job (a futex wake-up takes tens of microseconds, as long as a
    /// fair part of the job), short enough to sleep while the render is paused.
    private static let helperSpinNanoseconds: Int64 = 50_000
    /// How long the render thread spins for a job the helper is running before it sleeps.
    private static let finishSpinNanoseconds: Int64 = 300_000

    /// The monotonic clock in nanoseconds (vDSO: no system call). Real-time safe.
    @inline(__always)
    private static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }

    private let shared: Shared
    private var thread: PosixThread?

    /// Starts the thread (named `name`) that will run `job(argument)` for each ``begin(_:)``.
    /// Control thread. Throws when the system refuses a thread.
    package init(name: String, job: @escaping (Int) -> Void) throws(PosixThread.StartError) {
        let s = Shared(job: job)
        shared = s
        let hook = RenderWorkerPool.testOnly_workerThreadHook.withLock { $0 }
        thread = try PosixThread(name: name) { [s] in RenderHelperThread.loop(s, hook) }
    }

    deinit {
        shared.stopRequested.store(true, ordering: .releasing)
        sem_post(shared.start)
        thread?.join()
    }

    /// Tests only: when true, ``finish()`` never takes a job back, it waits for the helper to run
    /// it — so that a test can prove the helper's results are the serial ones whatever the
    /// machine's load (on a loaded machine the render thread may otherwise take every job back).
    package static let testOnly_helperRunsEveryJob = Atomic<Bool>(false)

    /// Jobs the helper (not the render thread) has run so far. Any thread.
    package var jobsRun: Int { shared.jobsRun.load(ordering: .relaxed) }

    /// Hands the helper its job for this slice. Real-time safe (no allocation, no lock).
    @inline(__always)
    package func begin(_ argument: Int) {
        shared.argument = argument
        shared.state.store(JobState.posted, ordering: .releasing)
        sem_post(shared.start)
    }

    /// Returns when the job handed by ``begin(_:)`` is done: runs it here when the helper has
    /// not claimed it yet, else waits for the helper. Allocates nothing, takes no lock; may wait
    /// (offline only).
    @inline(__always)
    package func finish() {
        let s = shared
        if !Self.testOnly_helperRunsEveryJob.load(ordering: .relaxed),
           s.state.compareExchange(expected: JobState.posted, desired: JobState.idle, ordering: .acquiringAndReleasing).exchanged {
            s.job(s.argument)
            return
        }
        // The helper is running the job on the other core: spin (checking the clock every 64 loads).
        let deadline = Self.now() + Self.finishSpinNanoseconds
        var spins = 0
        while s.state.load(ordering: .acquiring) != JobState.done {
            spins += 1
            if spins & 63 == 0 && Self.now() > deadline { break }
        }
        // The helper posts `done` once per job it claimed: consume it (at once if it came already).
        while sem_wait(s.done) != 0 {}
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
            // A job the render thread took back (or a wake-up for one already run) is skipped.
            guard s.state.compareExchange(expected: JobState.posted, desired: JobState.claimed,
                                          ordering: .acquiringAndReleasing).exchanged else { continue }
            s.job(s.argument)
            s.jobsRun.wrappingAdd(1, ordering: .relaxed)
            s.state.store(JobState.done, ordering: .releasing)
            sem_post(s.done)
        }
        hook?(false)
        RenderThreadMark.markCurrentThread(false)
    }
}
