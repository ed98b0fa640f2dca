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
/// Per slice: ``begin(_:)`` stores the argument and posts the helper's semaphore; the helper
/// spins briefly on it (`sem_trywait`) and then sleeps (`sem_wait`), runs the job with the
/// argument, sets the done flag and posts the render thread's semaphore; ``finish()`` spins on the
/// flag and then consumes the semaphore. POSIX semaphores order memory: what the render thread
/// wrote before ``begin(_:)`` is visible to the job, what the job wrote is visible after
/// ``finish()``. Nothing is allocated and no lock is taken; ``finish()`` *waits*, which is why
/// only offline renders (render thread count above 1, which live drivers refuse) use one, the
/// same rule as ``RenderWorkerPool``'s.
///
/// Thread safety: `init` and `deinit` on a control thread (deinit stops and joins the thread;
/// no render may be in progress). ``begin(_:)`` and ``finish()``: the thread rendering the
/// kernel, in pairs, one pair at a time. The job runs on the helper only.
package final class RenderHelperThread: @unchecked Sendable {
    private final class Shared: @unchecked Sendable {
        let start: UnsafeMutablePointer<sem_t>
        let done: UnsafeMutablePointer<sem_t>
        let job: (Int) -> Void
        /// Written before `start` is posted, read by the helper after its wait.
        var argument = 0
        let finished = Atomic<Bool>(false)
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

    /// Iterations of the spin (a few microseconds) before a side sleeps on its semaphore.
    private static let spinIterations = 4000

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

    /// Jobs the helper has run so far. Any thread.
    package var jobsRun: Int { shared.jobsRun.load(ordering: .relaxed) }

    /// Hands the helper its job for this slice. Real-time safe (no allocation, no lock).
    @inline(__always)
    package func begin(_ argument: Int) {
        shared.argument = argument
        shared.finished.store(false, ordering: .relaxed)
        sem_post(shared.start)
    }

    /// Waits until the job handed by ``begin(_:)`` is done. Allocates nothing, takes no lock;
    /// waits (offline only).
    @inline(__always)
    package func finish() {
        var spins = 0
        while !shared.finished.load(ordering: .acquiring) && spins < Self.spinIterations { spins += 1 }
        while sem_wait(shared.done) != 0 {}
    }

    private static func loop(_ s: Shared, _ hook: (@Sendable (Bool) -> Void)?) {
        RenderThreadMark.markCurrentThread(true)
        hook?(true)
        while true {
            var spins = 0
            while sem_trywait(s.start) != 0 {
                spins += 1
                if spins >= spinIterations {
                    while sem_wait(s.start) != 0 {}
                    break
                }
            }
            if s.stopRequested.load(ordering: .acquiring) { break }
            s.job(s.argument)
            s.jobsRun.wrappingAdd(1, ordering: .relaxed)
            s.finished.store(true, ordering: .releasing)
            sem_post(s.done)
        }
        hook?(false)
        RenderThreadMark.markCurrentThread(false)
    }
}
