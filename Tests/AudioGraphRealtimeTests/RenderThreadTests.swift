// Tests of RenderThread: the mark is per thread and nests in whileMarked.
import Foundation
import XCTest
import AudioGraphTesting
@testable import AudioGraphRealtime

final class RenderThreadTests: CountingLockViolationsTestCase {

    /// A mark on one thread is invisible on another; unmarking clears it.
    func testTheMarkBelongsToOneThread() {
        XCTAssertFalse(RenderThread.isCurrentThreadMarked)
        let seen = ControlLock<[Bool]>([])
        runOnNewThread {
            RenderThread.markCurrentThread(true)
            let here = RenderThread.isCurrentThreadMarked
            runOnNewThread { seen.withLock { $0.append(RenderThread.isCurrentThreadMarked) } }
            RenderThread.markCurrentThread(false)
            seen.withLock { $0 += [here, RenderThread.isCurrentThreadMarked] }
        }
        XCTAssertEqual(seen.withLock { $0 }, [false, true, false])
        XCTAssertFalse(RenderThread.isCurrentThreadMarked)
    }

    /// `whileMarked` marks for the body only and leaves an outer mark in place.
    func testWhileMarkedRestoresTheMark() {
        runOnNewThread {
            XCTAssertTrue(RenderThread.whileMarked { RenderThread.isCurrentThreadMarked })
            XCTAssertFalse(RenderThread.isCurrentThreadMarked)
            RenderThread.markCurrentThread(true)
            RenderThread.whileMarked {}
            XCTAssertTrue(RenderThread.isCurrentThreadMarked)
            RenderThread.markCurrentThread(false)
        }
    }
}
