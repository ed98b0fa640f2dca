// Races of AudioGraph's control side with real threads: edits racing initialize(), listeners that touch the graph.
import AudioGraphRealtime
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphCore
import AudioGraphTesting

/// A node with one Int property, `label`, for the listener and race tests. Its kernel copies the
/// label when made and takes later values from messages.
private final class LabelNode: GraphNode, @unchecked Sendable {
    let label = Atomic<Int>(0)
    private(set) var labelKernel: LabelKernel?

    init(_ id: String) {
        super.init(id: id, typeName: "label", inputBusCount: 1, outputBusCount: 1, parameters: [])
    }

    override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        guard name == "label", value is Int else { throw .invalidProperty(node: id, name: name, reason: "an Int label") }
    }

    override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        label.store(value as! Int, ordering: .relaxed)
        return LabelMessage(value as! Int)
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        let k = LabelKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
        labelKernel = k
        return k
    }
}

private final class LabelMessage: KernelMessage, @unchecked Sendable {
    let label: Int
    init(_ label: Int) { self.label = label }
}

/// The render side of ``LabelNode``: the label it was made with, then the ones messages bring.
private final class LabelKernel: NodeKernel, @unchecked Sendable {
    let label: Atomic<Int>

    init(node: LabelNode, maximumFramesPerSlice: Int) {
        label = Atomic(node.label.load(ordering: .relaxed))
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice, parameters: [])
    }

    override func receive(_ message: KernelMessage) {
        if let m = message as? LabelMessage { label.store(m.label, ordering: .relaxed) }
    }
}

final class AudioGraphConcurrencyTests: XCTestCase {
    /// Starts two threads together (a spin barrier) and waits for both.
    private func race(_ a: @escaping @Sendable () -> Void, _ b: @escaping @Sendable () -> Void) {
        let ready = Atomic<Int>(0)
        let group = DispatchGroup()
        for body in [a, b] {
            group.enter()
            Thread {
                ready.wrappingAdd(1, ordering: .acquiringAndReleasing)
                while ready.load(ordering: .acquiring) < 2 {}
                body()
                group.leave()
            }.start()
        }
        group.wait()
    }

    /// `addNode` racing `initialize()`: the node lands either before (initialized with the rest)
    /// or after (queued for `update()`), never in between without a kernel. Before the state was
    /// checked under the lock, a node could be added to an initialized graph without a kernel and
    /// the next `update()` trapped on it.
    func testConcurrencyAddNodeRacingInitializeNeverLeavesANodeWithoutAKernel() throws {
        var before = 0, after = 0
        for round in 0..<300 {
            let g = try makeGraph([CountingSourceNode("src"), TestOutputNode()], "src -> out")
            let extra = GainNode("extra")
            let errors = ControlLock<[String]>([])
            race({
                do { try g.initialize() } catch { errors.withLock { $0.append("initialize: \(error)") } }
            }, {
                do { try g.addNode(extra) } catch { errors.withLock { $0.append("addNode: \(error)") } }
            })
            XCTAssertEqual(errors.withLock { $0 }, [])
            let stranded = g.nodes.filter { $0.kernel == nil }.map(\.id)
            guard stranded.isEmpty else {
                XCTFail("round \(round): \(stranded) joined an initialized graph without a kernel")
                return
            }
            if g.pendingChanges.count == 1 { after += 1 } else { before += 1 }
            try g.update()
            XCTAssertNotNil(g.node("extra")?.kernel, "round \(round)")
            XCTAssertEqual(g.pendingChanges.count, 0)
        }
        print("addNode racing initialize: \(before) rounds added first, \(after) queued for update")
    }

    /// `setProperty` racing `initialize()`: the kernel ends up with the new value either way
    /// (made after it, or told by the queued change at `update()`). Before the graph decided under
    /// its lock, the node could apply the value to itself after the kernel was made from the old
    /// one, and the kernel never heard of it.
    func testConcurrencySetPropertyRacingInitializeReachesTheKernel() throws {
        let spin = Atomic<Int>(0)
        for round in 0..<600 {
            let node = LabelNode("label")
            let g = try makeGraph([CountingSourceNode("src"), node, TestOutputNode()], "src -> label -> out")
            // The property is set a little later each round (0 to ~60 µs), sweeping across initialize().
            race({ try? g.initialize() }, {
                for _ in 0..<(round % 60) * 40 { spin.wrappingAdd(1, ordering: .relaxed) }
                try? node.setProperty("label", round + 1)
            })
            try g.update()
            XCTAssertEqual(node.label.load(ordering: .relaxed), round + 1)
            guard node.labelKernel?.label.load(ordering: .relaxed) == round + 1 else {
                XCTFail("round \(round): the kernel kept label \(node.labelKernel?.label.load(ordering: .relaxed) ?? -1)")
                return
            }
        }
    }

    /// Runs `body` on another thread and fails (instead of hanging) when it has not returned
    /// within 10 s — a deadlocked thread is left behind blocked.
    private func finishes(_ what: String, _ body: @escaping @Sendable () throws -> Void) {
        let done = DispatchSemaphore(value: 0)
        let failure = ControlLock<String?>(nil)
        Thread {
            do { try body() } catch { failure.withLock { $0 = "\(error)" } }
            done.signal()
        }.start()
        if done.wait(timeout: .now() + 10) == .timedOut {
            XCTFail("\(what): deadlocked (a property listener ran under the graph lock)")
            return
        }
        XCTAssertNil(failure.withLock { $0 }, what)
    }

    /// A property listener that reads and edits the graph runs to completion, for a property set
    /// while open (`update()` applying a queued list) and on an initialized graph (change list).
    func testConcurrencyPropertyListenerMayReadAndEditTheGraph() throws {
        let node = LabelNode("label")
        let g = try makeGraph([CountingSourceNode("src"), node, TestOutputNode()], "src -> label -> out")
        let heard = ControlLock<[String]>([])
        node.addPropertyListener("label") { n, name in
            // Reads (the graph lock) and an edit (queued or applied at once) from inside the listener.
            let text = "\(name)=\((n as! LabelNode).label.load(ordering: .relaxed)) connections=\(g.connections.count)"
            try? g.node("src")?.setParameter("value", 2)
            heard.withLock { $0.append(text) }
        }
        finishes("listener while open") {
            g.enqueue(.setProperty(node: "label", name: "label", value: 1))
            try g.update()
        }
        try g.initialize()
        try g.start()
        finishes("listener on an initialized graph") {
            g.enqueue(.setProperty(node: "label", name: "label", value: 2))
            try g.update(waitUntilApplied: false)
        }
        XCTAssertEqual(heard.withLock { $0 }, ["label=1 connections=2", "label=2 connections=2"])
        XCTAssertEqual(g.node("src")?.parameter("value")?.value, 2)
        g.stop()
    }
}

extension AudioGraphConcurrencyTests {
    /// Rendering a running graph on a marked thread while another thread sets parameters takes no
    /// control lock; a control call made on the marked thread (here `graph.nodes`) is counted.
    func testRenderTakesNoControlLockButAControlCallIsCounted() throws {
        try countingLockViolations {
            let src = CountingSourceNode("src")
            let g = try makeGraph([src, GainNode("g"), TestOutputNode()], "src -> g -> out")
            try g.initialize()
            try g.start()
            runOnNewThread {
                RenderThreadMark.markCurrentThread(true)
                for i in 0..<2000 {
                    _ = g.render(frameCount: 64)
                    if i % 100 == 0 { RenderThreadMark.markCurrentThread(false); try? src.setParameter("value", Double(i % 7)); RenderThreadMark.markCurrentThread(true) }
                }
                XCTAssertEqual(RenderThreadMark.lockViolations, 0, "the render path took a ControlLock")
                _ = g.nodes
                RenderThreadMark.markCurrentThread(false)
            }
            XCTAssertEqual(RenderThreadMark.lockViolations, 1, "a control call on the render thread was not counted")
            g.stop()
        }
    }
}
