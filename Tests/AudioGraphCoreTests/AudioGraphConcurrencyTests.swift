// Races of AudioGraph's control side with real threads: edits racing initialize(), listeners that touch the graph.
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphCore

/// A node with one string property, `label`, for the listener tests.
private final class LabelNode: GraphNode, @unchecked Sendable {
    let label = Atomic<Int>(0)

    init(_ id: String) {
        super.init(id: id, typeName: "label", inputBusCount: 1, outputBusCount: 1, parameters: [])
    }

    override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        guard name == "label", value is Int else { throw .invalidProperty(node: id, name: name, reason: "an Int label") }
    }

    override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        label.store(value as! Int, ordering: .relaxed)
        return nil
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        NodeKernel(nodeID: id, outputFormats: outputFormats, maximumFramesPerSlice: maximumFramesPerSlice, parameters: [])
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
