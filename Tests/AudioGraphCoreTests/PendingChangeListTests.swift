// Tests of pending changes: queueing, atomic update(), rejection of invalid lists, hand-off while rendering.
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphCore

final class PendingChangeListTests: XCTestCase {
    func testListQueuesAndTakesInOrder() {
        let list = PendingChangeList()
        XCTAssertEqual(list.count, 0)
        list.append(contentsOf: [.removeNode("a"), .disconnect(destination: "b", destinationBus: 1)])
        list.append(contentsOf: [.connect(source: "x", sourceBus: 0, destination: "y", destinationBus: 2)])
        XCTAssertEqual(list.count, 3)
        let taken = list.take()
        XCTAssertEqual(list.count, 0)
        XCTAssertEqual(taken.count, 3)
        guard case .removeNode("a") = taken[0], case .disconnect("b", 1) = taken[1],
              case .connect("x", 0, "y", 2) = taken[2] else { return XCTFail("\(taken)") }
        XCTAssertTrue(list.take().isEmpty)
    }

    func testEditsAfterInitializeAreQueuedUntilUpdate() throws {
        let a = CountingSourceNode("a", value: 1), b = CountingSourceNode("b", value: 10)
        let g = try makeGraph([a, b, GainNode("g"), TestOutputNode()], "a -> g -> out")
        try g.initialize()
        try g.start()
        try g.disconnect("g")
        try g.connect("b", to: "g")
        try g.addNode(CountingSourceNode("c"))
        XCTAssertEqual(g.pendingChanges.count, 3)
        XCTAssertEqual(topologyText(g), "a:0 -> g:0\ng:0 -> out:0", "not applied before update()")
        XCTAssertNil(g.node("c"))
        XCTAssertEqual(renderSlice(g, frames: 8), [Float](repeating: 1, count: 8))
        XCTAssertFalse(try g.update(waitUntilApplied: false), "adopted by the next render")
        XCTAssertEqual(g.pendingChanges.count, 0)
        XCTAssertEqual(topologyText(g), "b:0 -> g:0\ng:0 -> out:0")
        XCTAssertNotNil(g.node("c"))
        XCTAssertEqual(renderSlice(g, frames: 8), [Float](repeating: 10, count: 8))
    }

    func testInvalidListThrowsAndLeavesTheGraphExactlyAsBefore() throws {
        let a = CountingSourceNode("a", value: 0.5)
        let g1 = GainNode("g1", gain: 2), g2 = GainNode("g2", gain: 3)
        let g = try makeGraph([a, g1, g2, TestOutputNode()], "a -> g1 -> g2 -> out")
        try g.initialize()
        try g.start()
        let before = topologyText(g)
        XCTAssertEqual(renderSlice(g, frames: 16), [Float](repeating: 3, count: 16))
        let plansBefore = g.testOnly_livePlanCount

        // A valid disconnect followed by a connect that closes a cycle g1 -> g2 -> g1.
        g.enqueue(contentsOf: [.disconnect(destination: "g1", destinationBus: 0),
                               .setParameter(node: "g2", address: "gain", value: 7, rampDuration: 0),
                               .connect(source: "g2", sourceBus: 0, destination: "g1", destinationBus: 0)])
        XCTAssertThrowsError(try g.update()) { guard case .cycle = $0 as? AudioGraphError else { return XCTFail("\($0)") } }
        XCTAssertEqual(topologyText(g), before)
        XCTAssertEqual(g.pendingChanges.count, 0, "the rejected list is discarded")
        XCTAssertEqual(g2.parameters[0].value, 3, "its parameter change is not applied either")
        XCTAssertEqual(g.testOnly_livePlanCount, plansBefore)
        XCTAssertEqual(renderSlice(g, frames: 16), [Float](repeating: 3, count: 16))

        // An added node followed by a missing one: the added node does not join.
        g.enqueue(contentsOf: [.addNode(CountingSourceNode("new")), .removeNode("ghost")])
        XCTAssertThrowsError(try g.update()) { XCTAssertEqual($0 as? AudioGraphError, .nodeNotFound("ghost")) }
        XCTAssertNil(g.node("new"))
        XCTAssertEqual(g.nodes.map(\.id), ["a", "g1", "g2", "out"])

        // Out-of-range parameter and removal of the output node.
        g.enqueue(contentsOf: [.disconnect(destination: "out", destinationBus: 0),
                               .setParameter(node: "g1", address: "gain", value: 11, rampDuration: 0)])
        XCTAssertThrowsError(try g.update()) { guard case .parameterOutOfRange = $0 as? AudioGraphError else { return XCTFail("\($0)") } }
        g.enqueue(.removeNode("out"))
        XCTAssertThrowsError(try g.update()) { XCTAssertEqual($0 as? AudioGraphError, .outputNodeCount(0)) }
        XCTAssertEqual(topologyText(g), before)
        XCTAssertEqual(renderSlice(g, frames: 16), [Float](repeating: 3, count: 16))
    }

    func testRemoveNodeDropsItsConnections() throws {
        let a = CountingSourceNode("a", value: 1), b = CountingSourceNode("b", value: 10)
        let g = try makeGraph([a, b, GainNode("g"), SumNode("s"), TestOutputNode()], "a -> g -> s:0; b -> s:1; s -> out")
        try g.initialize()
        try g.start()
        XCTAssertEqual(renderSlice(g, frames: 4), [11, 11, 11, 11])
        try g.removeNode("g")
        try g.update(waitUntilApplied: false)
        XCTAssertEqual(topologyText(g), "b:0 -> s:1\ns:0 -> out:0")
        XCTAssertEqual(renderSlice(g, frames: 4), [10, 10, 10, 10])
        // The input it fed is free again.
        try g.connect("a", outputBus: 0, to: "s", inputBus: 0)
        try g.update(waitUntilApplied: false)
        XCTAssertEqual(renderSlice(g, frames: 4), [11, 11, 11, 11])
    }

    /// While open, edits apply at once; a list queued with `enqueue` is applied by `update()` —
    /// all of it, parameter changes included.
    func testUpdateWhileOpenAppliesTheWholeList() throws {
        let a = CountingSourceNode("a", value: 1)
        let g = try makeGraph([a, GainNode("g"), TestOutputNode()], "a -> g")
        g.enqueue(contentsOf: [.connect(source: "g", sourceBus: 0, destination: "out", destinationBus: 0),
                               .setParameter(node: "g", address: "gain", value: 4, rampDuration: 0)])
        XCTAssertTrue(try g.update())
        XCTAssertEqual(topologyText(g), "a:0 -> g:0\ng:0 -> out:0")
        XCTAssertEqual(g.node("g")?.parameter("gain")?.value, 4, "the parameter change is not dropped")
        try g.initialize()
        try g.start()
        XCTAssertEqual(renderSlice(g, frames: 2), [4, 4])
    }

    func testReplacingANodeUnderTheSameIDInOneList() throws {
        let old = CountingSourceNode("a", value: 1)
        let g = try makeGraph([old, GainNode("g", gain: 2), TestOutputNode()], "a -> g -> out")
        try g.initialize()
        try g.start()
        XCTAssertEqual(renderSlice(g, frames: 4), [2, 2, 2, 2])
        let new = CountingSourceNode("a", mode: .localTime)
        g.enqueue(contentsOf: [.removeNode("a"), .addNode(new),
                               .connect(source: "a", sourceBus: 0, destination: "g", destinationBus: 0),
                               .setParameter(node: "g", address: "gain", value: 3, rampDuration: 0)])
        try g.update(waitUntilApplied: false)
        XCTAssertEqual(renderSlice(g, frames: 4), [0, 3, 6, 9])
        XCTAssertTrue(g.node("a") === new)
        XCTAssertEqual(new.probe.started, 4)
        XCTAssertEqual(old.probe.renders, 1)
    }

    func testAddedSourceCountsItsTimeFromTheFrameItWasAdded() throws {
        let a = CountingSourceNode("a", mode: .localTime)
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        for _ in 0..<3 { _ = renderSlice(g, frames: 64) }
        XCTAssertEqual(a.probe.started, 0)
        let late = CountingSourceNode("late", mode: .localTime)
        try g.addNode(late)
        try g.disconnect("out")
        try g.connect("late", to: "out")
        XCTAssertFalse(try g.update(waitUntilApplied: false), "not adopted before the next render")
        XCTAssertEqual(late.probe.started, -1)
        XCTAssertEqual(renderSlice(g, frames: 50), (0..<50).map(Float.init))
        XCTAssertEqual(late.probe.started, 192)
        XCTAssertEqual(renderSlice(g, frames: 3), [50, 51, 52])
        XCTAssertEqual(late.probe.lastSampleTime.load(ordering: .acquiring), 242, "slices carry graph sample times")

        // Added while initialized but not running: it starts at the next frame to render.
        g.stop()
        let later = CountingSourceNode("later", mode: .localTime)
        try g.addNode(later)
        try g.disconnect("out")
        try g.connect("later", to: "out")
        XCTAssertTrue(try g.update())
        XCTAssertEqual(later.probe.started, 245)
        try g.start()
        XCTAssertEqual(renderSlice(g, frames: 4), [0, 1, 2, 3])
    }

    func testUpdateWithoutWaitingReturnsFalseUntilARenderAdopts() throws {
        let a = CountingSourceNode("a", value: 1), b = CountingSourceNode("b", value: 2)
        let g = try makeGraph([a, b, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        XCTAssertEqual(g.testOnly_livePlanCount, 1)
        try g.disconnect("out")
        try g.connect("b", to: "out")
        XCTAssertFalse(try g.update(waitUntilApplied: false))
        XCTAssertEqual(g.testOnly_livePlanCount, 2, "the active plan and the published one")
        XCTAssertEqual(renderSlice(g, frames: 4), [2, 2, 2, 2])
        g.collectRetiredPlans()
        XCTAssertEqual(g.testOnly_livePlanCount, 1)
        // Waiting while running with nobody rendering gives up (after its 1 s limit) and says so.
        try g.disconnect("out")
        try g.connect("a", to: "out")
        let clock = ContinuousClock()
        let t0 = clock.now
        XCTAssertFalse(try g.update(waitUntilApplied: true))
        XCTAssertGreaterThanOrEqual(clock.now - t0, .milliseconds(900))
        XCTAssertEqual(renderSlice(g, frames: 4), [1, 1, 1, 1])
    }

    func testTwoUpdatesBeforeARenderBothTakeEffect() throws {
        let a = CountingSourceNode("a", mode: .localTime)
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        _ = renderSlice(g, frames: 10)
        let c1 = CountingSourceNode("c1", mode: .localTime)
        try g.addNode(c1)
        XCTAssertFalse(try g.update(waitUntilApplied: false))
        let c2 = CountingSourceNode("c2", value: 9)
        try g.addNode(c2)
        try g.disconnect("out")
        try g.connect("c2", to: "out")
        XCTAssertFalse(try g.update(waitUntilApplied: false))
        XCTAssertEqual(renderSlice(g, frames: 4), [9, 9, 9, 9])
        XCTAssertEqual(c1.probe.started, 10, "the first plan's start command was carried over")
        XCTAssertEqual(c2.probe.started, 10)
        g.collectRetiredPlans()
        XCTAssertEqual(g.testOnly_livePlanCount, 1)
    }

    /// A plan published with a sample time waits for the first slice boundary at or after it:
    /// slices of 64 frames, a re-patch timed at frame 150 switches the output at frame 192.
    func testTimedUpdateIsAdoptedAtTheFirstBoundaryAtOrAfterItsTime() throws {
        let a = CountingSourceNode("a", value: 1), b = CountingSourceNode("b", value: 2)
        let g = try makeGraph([a, b, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        try g.disconnect("out")
        try g.connect("b", to: "out")
        XCTAssertFalse(try g.update(waitUntilApplied: false, atSampleTime: 150))
        XCTAssertTrue(g.hasPendingPlan)
        var out: [Float] = []
        for _ in 0..<5 { out += renderSlice(g, frames: 64) }
        XCTAssertEqual(Array(out[0..<192]), [Float](repeating: 1, count: 192))
        XCTAssertEqual(Array(out[192...]), [Float](repeating: 2, count: 128))
        XCTAssertFalse(g.hasPendingPlan)
        g.collectRetiredPlans()
        XCTAssertEqual(g.testOnly_livePlanCount, 1)
        // A time already passed takes effect at the next boundary; stop() adopts one not yet due.
        try g.disconnect("out")
        try g.connect("a", to: "out")
        try g.update(waitUntilApplied: false, atSampleTime: 0)
        XCTAssertEqual(renderSlice(g, frames: 4), [1, 1, 1, 1])
        try g.disconnect("out")
        try g.connect("b", to: "out")
        try g.update(waitUntilApplied: false, atSampleTime: 1_000_000)
        XCTAssertEqual(renderSlice(g, frames: 4), [1, 1, 1, 1])
        g.stop()
        XCTAssertFalse(g.hasPendingPlan)
        try g.start()
        XCTAssertEqual(renderSlice(g, frames: 4), [2, 2, 2, 2])
    }

    /// One thread renders 20 000 slices while another re-patches and sets parameters: every
    /// slice is one of the valid states (a half-applied list would leave the gain's input empty).
    func testConcurrentUpdatesNeverShowAHalfAppliedList() throws {
        let a = CountingSourceNode("a", value: 1), b = CountingSourceNode("b", value: 100)
        let gain = GainNode("g", gain: 1)
        let g = try makeGraph([a, b, gain, TestOutputNode()], "a -> g -> out", maximumFramesPerSlice: 64)
        try g.initialize()
        try g.start()

        final class Shared: Sendable {
            let done = Atomic<Bool>(false)
            let updates = Atomic<Int>(0)
            let maxLivePlans = Atomic<Int>(0)
            let errors = Mutex<[String]>([])
        }
        let shared = Shared()
        let updater = Thread { [g, gain] in
            var i = 0
            while !shared.done.load(ordering: .acquiring) {
                i += 1
                do {
                    let which = i % 3
                    switch which {
                    case 0:
                        g.enqueue(contentsOf: [.disconnect(destination: "g", destinationBus: 0),
                                               .connect(source: "a", sourceBus: 0, destination: "g", destinationBus: 0)])
                    case 1:
                        g.enqueue(contentsOf: [.disconnect(destination: "g", destinationBus: 0),
                                               .connect(source: "b", sourceBus: 0, destination: "g", destinationBus: 0)])
                    default:
                        // Through a node added and removed in the lists (value 1000).
                        g.enqueue(contentsOf: [.addNode(CountingSourceNode("c\(i)", value: 1000)),
                                               .disconnect(destination: "g", destinationBus: 0),
                                               .connect(source: "c\(i)", sourceBus: 0, destination: "g", destinationBus: 0)])
                        try g.update(waitUntilApplied: i % 2 == 0)
                        g.enqueue(contentsOf: [.removeNode("c\(i)"),
                                               .connect(source: "a", sourceBus: 0, destination: "g", destinationBus: 0)])
                    }
                    try gain.parameters[0].setValue(i % 2 == 0 ? 1 : 2)
                    try g.update(waitUntilApplied: i % 2 == 0)
                    shared.updates.wrappingAdd(1, ordering: .relaxed)
                    let live = g.testOnly_livePlanCount
                    if live > shared.maxLivePlans.load(ordering: .relaxed) { shared.maxLivePlans.store(live, ordering: .relaxed) }
                } catch {
                    shared.errors.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        updater.start()

        let valid: Set<Float> = [1, 2, 100, 200, 1000, 2000]
        var bad: [(Int, [Float])] = []
        var seen: Set<Float> = []
        for slice in 0..<20_000 {
            guard let r = g.render(frameCount: 64) else {
                bad.append((slice, []))
                continue
            }
            let x = r.buffer.channel(0)
            let first = x[0]
            var uniform = true
            for i in 1..<64 where x[i] != first { uniform = false }
            if !uniform || !valid.contains(first) || r.isSilent {
                if bad.count < 5 { bad.append((slice, Array(UnsafeBufferPointer(start: x, count: 64)))) }
            }
            seen.insert(first)
            // Slow the renderer a little so that the updater gets many lists in.
            if slice % 64 == 0 { usleep(50) }
        }
        shared.done.store(true, ordering: .releasing)
        while !updater.isFinished { usleep(1000) }

        XCTAssertEqual(shared.errors.withLock { $0 }, [])
        XCTAssertTrue(bad.isEmpty, "slices not in a valid state: \(bad.prefix(3))")
        XCTAssertGreaterThan(shared.updates.load(ordering: .relaxed), 50, "the updater got lists in")
        XCTAssertGreaterThan(seen.count, 2, "several states were rendered: \(seen.sorted())")
        XCTAssertLessThanOrEqual(shared.maxLivePlans.load(ordering: .relaxed), 4, "retired plans are released")
        g.stop()
        g.collectRetiredPlans()
        XCTAssertEqual(g.testOnly_livePlanCount, 1)
    }
}
