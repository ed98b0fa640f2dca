// Tests of LV2URIDMap: its lock is a ControlLock, so a plugin mapping URIs on the render thread is reported.
import AudioGraphCore
import Foundation
import XCTest
@testable import AudioGraphPlugins
import AudioGraphRealtime

final class LV2URIDMapTests: XCTestCase {
    /// Review item 6: `map` called on a thread marked as a render thread (as a plugin mapping a
    /// URI inside `run` would) counts one lock violation; on a control thread none. With a bare
    /// `Mutex` (before the fix) the count stayed 0.
    func testMapOnARenderThreadIsReported() {
        let saved = RenderThreadMark.trapsOnViolation
        RenderThreadMark.trapsOnViolation = false
        defer { RenderThreadMark.trapsOnViolation = saved }
        RenderThreadMark.resetLockViolations()
        let table = LV2URIDMap()
        let first = table.map("urn:test:a")
        XCTAssertEqual(RenderThreadMark.lockViolations, 0)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var again: UInt32 = 0
        let thread = Thread {
            RenderThreadMark.markCurrentThread(true)
            again = table.map("urn:test:a")
            RenderThreadMark.markCurrentThread(false)
            done.signal()
        }
        thread.start()
        done.wait()
        XCTAssertEqual(again, first)
        XCTAssertEqual(RenderThreadMark.lockViolations, 1)
    }
}
