// Proves the real-time scaffold and its interposer see allocations, locks (Swift's Mutex included) and waits, per thread.
import AudioGraphRealtime
import AudioGraphTesting
import CAllocationCounter
import Synchronization
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A class instance the tests allocate; `payload` keeps it from being trivially empty.
private final class Payload {
    var payload: (Int, Int, Int, Int) = (1, 2, 3, 4)
}

/// Escapes objects so that no optimiser can promote them to the stack or drop them.
nonisolated(unsafe) private var sink: AnyObject?
nonisolated(unsafe) private var arraySink: [Int] = []
@inline(never)
private func allocatePayloads(_ count: Int) {
    for _ in 0..<count { sink = Payload() }
    sink = nil
}

final class RealTimeScaffoldTests: XCTestCase {
    override func setUpWithError() throws {
        // Under `make tsan` the sanitizer owns malloc and the interposer steps aside.
        try XCTSkipIf(ag_counter_is_sanitized() != 0, "allocations are not counted under sanitizers")
    }

    override func tearDown() {
        ag_counter_track_this_thread(0)
        super.tearDown()
    }

    func testInterposerIsLinkedIntoTheTestExecutable() {
        XCTAssertEqual(ag_counter_is_active(), 1,
                       "malloc calls do not reach CAllocationCounter: allocation tests would pass vacuously")
    }

    func testClassInstanceOnTrackedThreadCounts() {
        ag_counter_reset()
        ag_counter_track_this_thread(1)
        allocatePayloads(1)
        ag_counter_track_this_thread(0)
        XCTAssertGreaterThanOrEqual(ag_counter_allocations(), 1)
        XCTAssertGreaterThanOrEqual(ag_counter_frees(), 1, "the instance was released while tracked")
    }

    func testArrayGrowthCounts() {
        arraySink = []
        ag_counter_reset()
        ag_counter_track_this_thread(1)
        for i in 0..<1000 { arraySink.append(i) }  // grows by doubling: about log2(1000) reallocations
        ag_counter_track_this_thread(0)
        let allocations = ag_counter_allocations()
        arraySink = []
        XCTAssertGreaterThanOrEqual(allocations, 5, "1000 appends to an empty array reallocate several times")
    }

    func testRawAllocateAndDeallocateCountExactlyOnceEach() {
        ag_counter_reset()
        ag_counter_track_this_thread(1)
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
        pointer.deallocate()
        ag_counter_track_this_thread(0)
        XCTAssertEqual(ag_counter_allocations(), 1)
        XCTAssertEqual(ag_counter_frees(), 1)
        XCTAssertEqual(ag_counter_locks(), 0)
    }

    func testOverAlignedAllocationCounts() {
        ag_counter_reset()
        ag_counter_track_this_thread(1)
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64)  // aligned path
        pointer.deallocate()
        ag_counter_track_this_thread(0)
        XCTAssertEqual(ag_counter_allocations(), 1)
        XCTAssertEqual(ag_counter_frees(), 1)
    }

    func testAllocationsOnAnUntrackedThreadCountZero() {
        ag_counter_reset()
        // The joining thread tracks while the worker, untracked, allocates.
        RealTimeScaffold.runOnNewThread(tracked: false, callerTracksMeanwhile: true) { allocatePayloads(1000) }
        XCTAssertEqual(ag_counter_allocations(), 0)
        XCTAssertEqual(ag_counter_frees(), 0)

        // Control: the same work on a tracked worker thread is seen.
        ag_counter_reset()
        RealTimeScaffold.runOnNewThread(tracked: true) { allocatePayloads(1000) }
        XCTAssertGreaterThanOrEqual(ag_counter_allocations(), 1000)
        XCTAssertGreaterThanOrEqual(ag_counter_frees(), 1000)
    }

    func testPthreadMutexLockCountsOne() {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        defer { mutex.deallocate() }
        XCTAssertEqual(pthread_mutex_init(mutex, nil), 0)
        defer { pthread_mutex_destroy(mutex) }

        ag_counter_reset()
        ag_counter_track_this_thread(1)
        let locked = pthread_mutex_lock(mutex)
        let unlocked = pthread_mutex_unlock(mutex)
        ag_counter_track_this_thread(0)
        XCTAssertEqual(locked, 0)
        XCTAssertEqual(unlocked, 0)
        XCTAssertEqual(ag_counter_locks(), 1)
        XCTAssertEqual(ag_counter_allocations(), 0)

        ag_counter_track_this_thread(1)
        let tried = pthread_mutex_trylock(mutex)
        ag_counter_track_this_thread(0)
        XCTAssertEqual(tried, 0, "the mutex was free, so trylock acquires it")
        pthread_mutex_unlock(mutex)
        XCTAssertEqual(ag_counter_locks(), 2)
    }

    func testAtomicArithmeticCountsNothing() {
        let value = Atomic<Int>(0)
        ag_counter_reset()
        ag_counter_track_this_thread(1)
        for _ in 0..<1000 { value.wrappingAdd(1, ordering: .relaxed) }
        ag_counter_track_this_thread(0)
        XCTAssertEqual(value.load(ordering: .relaxed), 1000)
        XCTAssertEqual(ag_counter_allocations(), 0)
        XCTAssertEqual(ag_counter_locks(), 0)
    }

    func testResetZeroesEveryCounter() {
        ag_counter_track_this_thread(1)
        allocatePayloads(3)
        ag_counter_track_this_thread(0)
        XCTAssertGreaterThan(ag_counter_allocations(), 0)
        ag_counter_reset()
        XCTAssertEqual(ag_counter_allocations(), 0)
        XCTAssertEqual(ag_counter_frees(), 0)
        XCTAssertEqual(ag_counter_locks(), 0)
    }

    // MARK: The detectors, on a marked and tracked thread

    /// One `ControlLock` (Swift's `Mutex` inside, which the interposer cannot see uncontended)
    /// counts one control lock; one raw `pthread_mutex_lock` one pthread lock; one `malloc` one
    /// allocation — in both shapes of the scaffold.
    func testDetectorsCountALockAndAnAllocationOnTheRenderThread() {
        let lock = ControlLock<Int>(0)
        let raw = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(raw, nil)
        defer { pthread_mutex_destroy(raw); raw.deallocate() }
        let rawBits = Int(bitPattern: raw)
        let breakTheRules: @Sendable () -> Void = {
            lock.withLock { $0 += 1 }
            let m = UnsafeMutablePointer<pthread_mutex_t>(bitPattern: rawBits)!
            pthread_mutex_lock(m)
            pthread_mutex_unlock(m)
            free(malloc(32))
        }
        let onThread = RealTimeScaffold.runRenderThread(render: breakTheRules).counts
        let here = RealTimeScaffold.count(breakTheRules).counts
        for counts in [onThread, here] {
            XCTAssertEqual(counts.controlLocks, 1, "a ControlLock on the render thread was not counted")
            XCTAssertNotNil(counts.violation)
            XCTAssertEqual(counts.locks, 1, "a pthread_mutex_lock on the render thread was not counted")
            XCTAssertGreaterThanOrEqual(counts.allocations, 1, "a malloc on the render thread was not counted")
            XCTAssertGreaterThanOrEqual(counts.frees, 1)
        }
        XCTAssertEqual(lock.withLock { $0 }, 2)
    }

    /// A raw Swift `Mutex` (not a `ControlLock`) that another thread holds when the render thread
    /// wants it: the render thread waits in the kernel (FUTEX_LOCK_PI through syscall(2)), and
    /// the scaffold counts it. (An uncontended raw `Mutex` is a compare-and-swap and nothing
    /// else; `ArchitectureDocTests` keeps raw `Mutex`es to the documented control-side places.)
    func testAContendedSwiftMutexOnTheRenderThreadCounts() throws {
        let mutex = Mutex<Int>(0)
        let holding = Atomic<Bool>(false)
        let release = Atomic<Bool>(false)
        let holder = try PosixThread(name: "ag-test-holder") {
            mutex.withLock { value in
                holding.store(true, ordering: .releasing)
                while !release.load(ordering: .acquiring) { usleep(100) }
                value += 1
            }
        }
        defer { holder.join() }
        while !holding.load(ordering: .acquiring) { usleep(100) }
        let locking = Atomic<Bool>(false)
        let run = RealTimeScaffold.runRenderThread(render: {
            locking.store(true, ordering: .releasing)
            mutex.withLock { $0 += 1 }
        }, whileRendering: { step in
            // Release only once the render thread has reached the lock (a loaded machine may
            // start it late), and 50 ms later: by then it is waiting in the kernel.
            while !locking.load(ordering: .acquiring) { usleep(1000) }
            usleep(50_000)
            release.store(true, ordering: .releasing)
        })
        holder.join()
        XCTAssertEqual(mutex.withLock { $0 }, 2)
        XCTAssertGreaterThanOrEqual(run.counts.waits, 1, "a render thread waiting on a Swift Mutex was not counted: \(run.counts)")
        XCTAssertNotNil(run.counts.violation)

        // Control: the same Mutex, free, costs the render thread nothing the scaffold can see.
        let free = RealTimeScaffold.runRenderThread(render: { mutex.withLock { $0 += 1 } }).counts
        XCTAssertEqual(free.waits, 0)
        XCTAssertEqual(free.allocations, 0)
    }

    /// Atomics, arithmetic and a render-thread mark are free: nothing counted, no violation.
    func testNothingCountedForRealTimeSafeWork() {
        let value = Atomic<Int>(0)
        let run = RealTimeScaffold.runRenderThread(render: {
            for _ in 0..<1000 { value.wrappingAdd(1, ordering: .relaxed) }
            return RenderThreadMark.isCurrentThreadMarked
        })
        XCTAssertTrue(run.result, "the render thread was not marked")
        XCTAssertEqual(run.counts, RealTimeScaffold.Counts())
        XCTAssertNil(run.counts.violation)
    }
}
