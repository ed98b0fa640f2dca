// Tests of RenderThreadMark: the mark is per thread and nests in whileMarked.
import Foundation
import XCTest
import AudioGraphTesting
@testable import AudioGraphRealtime

final class RenderThreadMarkTests: CountingLockViolationsTestCase {

    /// A mark on one thread is invisible on another; unmarking clears it.
    func testTheMarkBelongsToOneThread() {
        XCTAssertFalse(RenderThreadMark.isCurrentThreadMarked)
        let seen = ControlLock<[Bool]>([])
        runOnNewThread {
            RenderThreadMark.markCurrentThread(true)
            let here = RenderThreadMark.isCurrentThreadMarked
            runOnNewThread { seen.withLock { $0.append(RenderThreadMark.isCurrentThreadMarked) } }
            RenderThreadMark.markCurrentThread(false)
            seen.withLock { $0 += [here, RenderThreadMark.isCurrentThreadMarked] }
        }
        XCTAssertEqual(seen.withLock { $0 }, [false, true, false])
        XCTAssertFalse(RenderThreadMark.isCurrentThreadMarked)
    }

    /// `whileMarked` marks for the body only and leaves an outer mark in place.
    func testWhileMarkedRestoresTheMark() {
        runOnNewThread {
            XCTAssertTrue(RenderThreadMark.whileMarked { RenderThreadMark.isCurrentThreadMarked })
            XCTAssertFalse(RenderThreadMark.isCurrentThreadMarked)
            RenderThreadMark.markCurrentThread(true)
            RenderThreadMark.whileMarked {}
            XCTAssertTrue(RenderThreadMark.isCurrentThreadMarked)
            RenderThreadMark.markCurrentThread(false)
        }
    }
}
