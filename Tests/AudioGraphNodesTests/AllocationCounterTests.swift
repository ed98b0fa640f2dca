// Proves that the test-only malloc/mutex interposer really sees Swift's allocations and locks, per thread.
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
/// Holds a new worker thread back until its creator is ready.
private let workerMayStart = Atomic<Bool>(false)

@inline(never)
private func allocatePayloads(_ count: Int) {
    for _ in 0..<count { sink = Payload() }
    sink = nil
}

/// Runs `body` on a fresh pthread, tracked or not, and joins it. The thread is created while the
/// calling thread is untracked; with `callerTracksMeanwhile` the caller tracks itself from before
/// the worker starts `body` until it has joined it (pthread_join allocates nothing).
private func runOnNewThread(tracked: Bool, callerTracksMeanwhile: Bool = false,
                            _ body: @escaping @Sendable () -> Void) {
    final class Context: @unchecked Sendable {
        let tracked: Bool
        let body: @Sendable () -> Void
        init(tracked: Bool, body: @escaping @Sendable () -> Void) { self.tracked = tracked; self.body = body }
    }
    let context = Unmanaged.passRetained(Context(tracked: tracked, body: body)).toOpaque()
    workerMayStart.store(false, ordering: .releasing)
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { raw in
        let context = Unmanaged<Context>.fromOpaque(raw!).takeUnretainedValue()
        while !workerMayStart.load(ordering: .acquiring) {}
        ag_counter_track_this_thread(context.tracked ? 1 : 0)
        context.body()
        ag_counter_track_this_thread(0)
        return nil
    }, context)
    precondition(created == 0, "pthread_create failed: \(created)")
    if callerTracksMeanwhile { ag_counter_track_this_thread(1) }
    workerMayStart.store(true, ordering: .releasing)
    pthread_join(thread, nil)
    if callerTracksMeanwhile { ag_counter_track_this_thread(0) }
    Unmanaged<Context>.fromOpaque(context).release()
}

final class AllocationCounterTests: XCTestCase {
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
        runOnNewThread(tracked: false, callerTracksMeanwhile: true) { allocatePayloads(1000) }
        XCTAssertEqual(ag_counter_allocations(), 0)
        XCTAssertEqual(ag_counter_frees(), 0)

        // Control: the same work on a tracked worker thread is seen.
        ag_counter_reset()
        runOnNewThread(tracked: true) { allocatePayloads(1000) }
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
}
