// Tests of RenderThread: the mark is per thread, nests in whileMarked, and the engine's own paths honour it.
import Foundation
import XCTest
@testable import AudioGraphCore

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

    /// Rendering a running graph on a marked thread while another thread sets parameters takes no
    /// control lock; a control call made on the marked thread (here `graph.nodes`) is counted.
    func testRenderTakesNoControlLockButAControlCallIsCounted() throws {
        let src = CountingSourceNode("src")
        let g = try makeGraph([src, GainNode("g"), TestOutputNode()], "src -> g -> out")
        try g.initialize()
        try g.start()
        runOnNewThread {
            RenderThread.markCurrentThread(true)
            for i in 0..<2000 {
                _ = g.render(frameCount: 64)
                if i % 100 == 0 { RenderThread.markCurrentThread(false); try? src.setParameter("value", Double(i % 7)); RenderThread.markCurrentThread(true) }
            }
            XCTAssertEqual(RenderThread.lockViolations, 0, "the render path took a ControlLock")
            _ = g.nodes
            RenderThread.markCurrentThread(false)
        }
        XCTAssertEqual(RenderThread.lockViolations, 1, "a control call on the render thread was not counted")
        g.stop()
    }
}
