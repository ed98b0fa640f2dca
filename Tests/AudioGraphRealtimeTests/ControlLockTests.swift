// Tests of ControlLock: mutual exclusion, and the real-time check on threads marked as render threads.
import Foundation
import Synchronization
import XCTest
import AudioGraphTesting
@testable import AudioGraphRealtime

#if canImport(Glibc)
import Glibc
#endif

/// A test case in which a lock taken on a marked thread counts instead of trapping (the count is
/// reset before each test; the trapping setting is restored after it).
class CountingLockViolationsTestCase: XCTestCase {
    override func invokeTest() {
        countingLockViolations { super.invokeTest() }
    }
}

final class ControlLockTests: CountingLockViolationsTestCase {

    /// Four threads add 1 to a guarded counter 20 000 times each: exactly 80 000, no update lost.
    func testExcludesConcurrentWriters() {
        let lock = ControlLock<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<20_000 { lock.withLock { $0 += 1 } }
        }
        XCTAssertEqual(lock.withLock { $0 }, 80_000)
        XCTAssertEqual(RenderThreadMark.lockViolations, 0, "no thread here is a render thread")
    }

    /// The detector itself: the same lock taken once on a marked thread counts exactly one
    /// violation; taken on unmarked threads (before and after) it counts none.
    func testCountsALockTakenOnAMarkedThread() {
        let lock = ControlLock<Int>(0)
        lock.withLock { $0 += 1 }
        runOnNewThread {
            RenderThreadMark.markCurrentThread(true)
            lock.withLock { $0 += 1 }
            RenderThreadMark.markCurrentThread(false)
            lock.withLock { $0 += 1 }
        }
        XCTAssertEqual(RenderThreadMark.lockViolations, 1)
        XCTAssertEqual(lock.withLock { $0 }, 3)
    }

    /// A throwing body passes its typed error through (the lock is released: it can be taken again).
    func testTypedErrorsPassThrough() {
        let lock = ControlLock<Int>(0)
        XCTAssertThrowsError(try lock.withLock { _ throws(AudioGraphError) in throw .nodeNotFound("x") }) {
            XCTAssertEqual($0 as? AudioGraphError, .nodeNotFound("x"))
        }
        XCTAssertEqual(lock.withLock { $0 }, 0)
    }
}
