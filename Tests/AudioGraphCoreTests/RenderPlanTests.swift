// Tests of the render-plan hand-off: generations, retirement, and where kernels are released.
import XCTest
@testable import AudioGraphCore

final class RenderPlanTests: XCTestCase {
    func testRemovedNodesKernelIsReleasedOnlyAfterTheRenderThreadMovedOn() throws {
        let a = CountingSourceNode("a", value: 1), b = CountingSourceNode("b", value: 2)
        let g = try makeGraph([a, b, SumNode("s"), TestOutputNode()], "a -> s:0; b -> s:1; s -> out")
        try g.initialize()
        try g.start()
        XCTAssertEqual(renderSlice(g, frames: 4), [3, 3, 3, 3])
        weak let kernel = b.kernel
        try g.removeNode("b")
        XCTAssertFalse(try g.update(waitUntilApplied: false))
        XCTAssertNotNil(kernel, "the active plan still renders it")
        g.collectRetiredPlans()
        XCTAssertNotNil(kernel, "not adopted yet: the old plan is still active")
        XCTAssertEqual(renderSlice(g, frames: 4), [1, 1, 1, 1])
        // The render thread adopted the new plan; only the control side frees the old one.
        g.collectRetiredPlans()
        XCTAssertEqual(g.testOnly_livePlanCount, 1)
        XCTAssertNotNil(b.kernel, "the node object itself keeps its kernel until it goes away")
    }

    func testKernelOfARemovedNodeDiesWithTheNode() throws {
        let a = CountingSourceNode("a", value: 1)
        let g = try makeGraph([a, SumNode("s"), TestOutputNode()], "a -> s:0; s -> out")
        try g.initialize()
        try g.start()
        weak var kernel: NodeKernel?
        weak var node: GraphNode?
        do {
            let b = CountingSourceNode("b", value: 2)
            node = b
            try g.addNode(b)
            try g.connect("b", to: "s", inputBus: 1)
            try g.update(waitUntilApplied: false)
            XCTAssertEqual(renderSlice(g, frames: 4), [3, 3, 3, 3])
            kernel = b.kernel
            try g.removeNode("b")
            try g.update(waitUntilApplied: false)
        }
        XCTAssertNotNil(kernel, "the active plan holds it until the render thread moves on")
        XCTAssertEqual(renderSlice(g, frames: 4), [1, 1, 1, 1])
        g.collectRetiredPlans()
        XCTAssertNil(node, "the graph no longer holds the removed node")
        XCTAssertNil(kernel, "released by collectRetiredPlans on the control thread")
    }

    func testPlanGenerationsIncreaseAndOnlyTheNewestIsKept() throws {
        let a = CountingSourceNode("a", mode: .localTime)
        let g = try makeGraph([a, GainNode("g"), TestOutputNode()], "a -> g -> out")
        try g.initialize()
        try g.start()
        for i in 0..<10 {
            g.enqueue(.setParameter(node: "g", address: "gain", value: Double(i + 1) / 2, rampDuration: 0))
            try g.update(waitUntilApplied: false)
            // Each newer list took the unadopted one back: only one plan waits for the render thread.
            XCTAssertTrue(g.hasPendingPlan)
        }
        // Nothing was adopted, so nothing could be retired: the first plan and the ten compiled since.
        XCTAssertEqual(g.testOnly_livePlanCount, 11)
        // One render adopts the newest plan (gain 5, the last list's) over the source's own frame count 0, 1, 2, 3.
        XCTAssertEqual(renderSlice(g, frames: 4), [0, 5, 10, 15])
        XCTAssertFalse(g.hasPendingPlan)
        g.collectRetiredPlans()
        XCTAssertEqual(g.testOnly_livePlanCount, 1)
    }

    func testUninitializeWithAPublishedPlanReleasesEverything() throws {
        let a = CountingSourceNode("a")
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        weak var newKernel: NodeKernel?
        let c = CountingSourceNode("c")
        try g.addNode(c)
        try g.update(waitUntilApplied: false)
        newKernel = c.kernel
        XCTAssertNotNil(newKernel)
        g.uninitialize()
        XCTAssertEqual(g.state, .open)
        XCTAssertEqual(g.testOnly_livePlanCount, 0)
        XCTAssertNil(c.kernel)
        XCTAssertNil(newKernel)
        // The change list was applied: the node is part of the open graph now.
        XCTAssertNotNil(g.node("c"))
    }
}
