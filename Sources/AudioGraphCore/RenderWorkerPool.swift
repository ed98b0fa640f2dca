// The worker threads that render a plan's independent units beside the render thread (offline).
import AudioGraphRealtime
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixed set of worker threads that render the tasks of a ``ParallelSchedule`` for each slice,
/// phase by phase, while the render thread renders its own share (group 0) of each phase and
/// then waits for them.
///
/// The hand-off per phase of a slice: the render thread writes the job (plan, phase, slice), sets
/// the count of busy workers, and posts the semaphore of each worker with tasks in the phase; a worker spins briefly on its semaphore
/// (`sem_trywait`, no system call) and then sleeps on it (`sem_wait`: a futex), renders its
/// group, and decrements the count; the last one posts the render thread's semaphore. The render
/// thread, after its own share, spins on the count and then sleeps on its semaphore. Nothing is
/// allocated and no lock is taken on either side; POSIX semaphores order memory, so what a worker
/// rendered is visible to the render thread after the wait, and the plan's commands and earlier
/// slices are visible to the worker.
///
/// The render thread *waits* for the workers: that is fine offline (the render is as fast as the
/// machine allows), but a live render thread must never wait on threads that the scheduler may
/// preempt, so graphs rendered live keep ``AudioGraph/renderThreadCount`` at 1 (the default).
///
/// Thread safety: created and released on a control thread (release joins the workers: only
/// when no render call is in progress, which holds when the last plan referring to the pool is
/// retired). ``run(_:_:)``: the render thread only, one call at a time. Real-time: allocates
/// nothing, takes no lock; it waits (offline only).
final class RenderWorkerPool: @unchecked Sendable {
    /// Threads that render, the render thread included (workers + 1).
    let threadCount: Int
    private let shared: Shared
    private var threads: [PosixThread] = []

    /// Called on each worker thread as it starts (true) and before it ends (false): tests turn
    /// on allocation counting there. Set before the graph creates its pool.
    static let testOnly_workerThreadHook = Mutex<(@Sendable (Bool) -> Void)?>(nil)
    /// Tests: worker creation fails (EAGAIN, as pthread_create reports too many threads) after
    /// this many workers; nil: never. (As root, RLIMIT_NPROC cannot make it fail for real.)
    static let testOnly_workerCreationLimit = Mutex<Int?>(nil)

    /// State the workers and the render thread share.
    private final class Shared: @unchecked Sendable {
        let workerCount: Int
        /// One start semaphore per worker, and the render thread's done semaphore.
        let start: UnsafeMutablePointer<sem_t>
        let done: UnsafeMutablePointer<sem_t>

        // MARK: Written by the render thread before posting `start` (read by workers after)
        unowned(unsafe) var plan: RenderPlan?
        var phase = 0
        var context = RenderContext(sampleTime: 0, frameCount: 0, sampleRate: 1)

        // MARK: Shared (atomic)
        /// Workers still rendering the current slice.
        let busy = Atomic<Int>(0)
        let stopRequested = Atomic<Bool>(false)
        /// Groups the workers rendered (a diagnostic: proves the workers took part).
        let renderedGroups = Atomic<Int>(0)

        init(workerCount: Int) {
            self.workerCount = workerCount
            start = .allocate(capacity: max(1, workerCount))
            for w in 0..<workerCount { sem_init(start + w, 0, 0) }
            done = .allocate(capacity: 1)
            sem_init(done, 0, 0)
        }

        deinit {
            for w in 0..<workerCount { sem_destroy(start + w) }
            start.deallocate()
            sem_destroy(done)
            done.deallocate()
        }
    }

    /// Iterations of the spin (about a few microseconds) before a thread sleeps on its semaphore.
    private static let spinIterations = 4000

    /// Starts `threadCount - 1` worker threads. Control thread.
    ///
    /// - Throws: `.renderThreadsUnavailable` when a thread cannot be created (the ones already
    ///   started are stopped and joined).
    init(threadCount: Int) throws(AudioGraphError) {
        precondition(threadCount >= 2, "a worker pool needs at least two render threads")
        self.threadCount = threadCount
        shared = Shared(workerCount: threadCount - 1)
        let hook = Self.testOnly_workerThreadHook.withLock { $0 }
        let limit = Self.testOnly_workerCreationLimit.withLock { $0 }
        for w in 0..<(threadCount - 1) {
            let argument = WorkerArgument(shared: shared, index: w, hook: hook)
            do throws(PosixThread.StartError) {
                if w >= (limit ?? .max) { throw PosixThread.StartError(code: EAGAIN) }
                threads.append(try PosixThread(name: "ag-render-\(w + 1)") { RenderWorkerPool.workerLoop(argument) })
            } catch {
                stopWorkers()
                throw .renderThreadsUnavailable(requested: threadCount, reason: String(cString: strerror(error.code)))
            }
        }
    }

    deinit { stopWorkers() }

    /// Stops and joins the workers started so far. Control thread; idempotent.
    private func stopWorkers() {
        shared.stopRequested.store(true, ordering: .releasing)
        for w in 0..<threads.count { sem_post(shared.start + w) }
        for t in threads { t.join() }
        threads = []
    }

    /// Groups of tasks (one per worker with tasks, per phase and slice) the workers rendered since
    /// the pool started. Any thread.
    var renderedGroupCount: Int { shared.renderedGroups.load(ordering: .relaxed) }

    /// Renders `plan`'s parallel tasks for `context`, phase by phase: the workers' groups on the
    /// workers, group 0 here, and returns when all are rendered. Render thread; allocates nothing,
    /// takes no lock, waits for the workers (offline only).
    @inline(__always)
    func run(_ plan: RenderPlan, _ context: RenderContext) {
        let s = shared
        s.plan = plan
        s.context = context
        var phase = 0
        while phase < plan.parallelPhaseCount {
            s.phase = phase
            var posted = 0
            var w = 0
            while w < s.workerCount {
                if plan.parallelGroupSize(phase, w + 1) > 0 { posted += 1 }
                w += 1
            }
            s.busy.store(posted, ordering: .releasing)
            w = 0
            while w < s.workerCount {
                if plan.parallelGroupSize(phase, w + 1) > 0 { sem_post(s.start + w) }
                w += 1
            }
            plan.renderParallelGroup(phase, 0, context)
            if posted > 0 {
                var spins = 0
                while s.busy.load(ordering: .acquiring) > 0 && spins < Self.spinIterations { spins += 1 }
                // The last worker posts `done` once per phase: consume it (at once if it came already).
                while sem_wait(s.done) != 0 {}
            }
            phase += 1
        }
    }

    private final class WorkerArgument: @unchecked Sendable {
        let shared: Shared
        let index: Int
        let hook: (@Sendable (Bool) -> Void)?
        init(shared: Shared, index: Int, hook: (@Sendable (Bool) -> Void)?) {
            self.shared = shared
            self.index = index
            self.hook = hook
        }
    }

    private static func workerLoop(_ a: WorkerArgument) {
        let s = a.shared
        RenderThreadMark.markCurrentThread(true)
        a.hook?(true)
        let start = s.start + a.index
        while true {
            var spins = 0
            while sem_trywait(start) != 0 {
                spins += 1
                if spins >= spinIterations {
                    while sem_wait(start) != 0 {}
                    break
                }
            }
            if s.stopRequested.load(ordering: .acquiring) { break }
            if let plan = s.plan {
                plan.renderParallelGroup(s.phase, a.index + 1, s.context)
                s.renderedGroups.wrappingAdd(1, ordering: .relaxed)
            }
            if s.busy.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 { sem_post(s.done) }
        }
        a.hook?(false)
        RenderThreadMark.markCurrentThread(false)
    }
}
