// Tests of Topology: change application, reachability and the render order, graphs stated as text.
import XCTest
@testable import AudioGraphCore

final class TopologyTests: XCTestCase {
    /// A topology of the named nodes (sources `s*`, gains `g*`, sums `m*`, output `out`) and connections.
    private func topology(_ ids: [String], _ connections: String) throws -> Topology {
        var t = Topology(nodes: [:], order: [], connections: [:])
        for id in ids {
            let node: GraphNode = id.hasPrefix("s") ? CountingSourceNode(id) : id.hasPrefix("g") ? GainNode(id)
                : id.hasPrefix("m") ? SumNode(id) : TestOutputNode(id)
            try t.apply(.addNode(node))
        }
        for c in parseConnections(connections) {
            try t.apply(.connect(source: c.source, sourceBus: c.sourceBus, destination: c.destination, destinationBus: c.destinationBus))
        }
        return t
    }

    func testRenderOrderPutsEverySourceBeforeWhatItFeeds() throws {
        let t = try topology(["out", "m1", "g2", "g1", "s2", "s1"], """
            s1 -> g1 -> m1:0
            s2 -> g2 -> m1:1
            m1 -> out
            """)
        let order = try t.topologicalOrder()
        XCTAssertEqual(Set(order), Set(t.order))
        func before(_ a: String, _ b: String) -> Bool { order.firstIndex(of: a)! < order.firstIndex(of: b)! }
        for c in parseConnections("s1 -> g1 -> m1; s2 -> g2 -> m1; m1 -> out") {
            XCTAssertTrue(before(c.source, c.destination), "\(c) in \(order)")
        }
        // Stable by insertion order among independent nodes.
        XCTAssertEqual(order, ["s2", "s1", "g2", "g1", "m1", "out"])
    }

    func testReachability() throws {
        let t = try topology(["s1", "g1", "g2", "m1", "out"], "s1 -> g1 -> m1:0; g2 -> m1:1; m1 -> out")
        XCTAssertTrue(t.reaches(from: "s1", to: "out"))
        XCTAssertTrue(t.reaches(from: "g2", to: "out"))
        XCTAssertFalse(t.reaches(from: "out", to: "s1"))
        XCTAssertFalse(t.reaches(from: "g1", to: "g2"))
        XCTAssertTrue(t.reaches(from: "g1", to: "g1"))
    }

    func testCycleThroughASumIsRejectedAndTheCopyIsUnchanged() throws {
        var t = try topology(["s1", "g1", "m1", "out"], "s1 -> m1:0; m1 -> g1")
        let before = t.connections
        XCTAssertThrowsError(try t.apply(.connect(source: "g1", sourceBus: 0, destination: "m1", destinationBus: 1))) {
            XCTAssertEqual($0 as? AudioGraphError, .cycle(node: "m1"))
        }
        XCTAssertEqual(t.connections, before)
    }

    func testRemoveNodeDropsConnectionsBothWays() throws {
        var t = try topology(["s1", "g1", "g2", "out"], "s1 -> g1 -> g2 -> out")
        try t.apply(.removeNode("g1"))
        XCTAssertEqual(t.connections, [AudioGraph.BusKey(node: "out", bus: 0): AudioGraph.BusKey(node: "g2", bus: 0)])
        XCTAssertEqual(t.order, ["s1", "g2", "out"])
        XCTAssertThrowsError(try t.apply(.removeNode("g1"))) { XCTAssertEqual($0 as? AudioGraphError, .nodeNotFound("g1")) }
    }

    func testOutputCount() throws {
        XCTAssertNoThrow(try topology(["s1", "out"], "").checkOutputCount())
        XCTAssertThrowsError(try topology(["s1"], "").checkOutputCount()) { XCTAssertEqual($0 as? AudioGraphError, .outputNodeCount(0)) }
        XCTAssertThrowsError(try topology(["out", "out2"], "").checkOutputCount()) { XCTAssertEqual($0 as? AudioGraphError, .outputNodeCount(2)) }
    }
}
