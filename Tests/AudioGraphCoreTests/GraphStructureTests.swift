// GraphStructure: the structural rules every front door shares, each problem with its site.
import AudioGraphCore
import XCTest

final class GraphStructureTests: XCTestCase {
    /// src (0 in, 1 out) → mix (2 in, 1 out) → out (1 in, 0 out, the output).
    func makeStructure() throws -> GraphStructure {
        var s = GraphStructure()
        try s.apply(.addNode(NodeShape(id: "src", inputBusCount: 0, outputBusCount: 1, isOutput: false)))
        try s.apply(.addNode(NodeShape(id: "mix", inputBusCount: 2, outputBusCount: 1, isOutput: false)))
        try s.apply(.addNode(NodeShape(id: "out", inputBusCount: 1, outputBusCount: 0, isOutput: true)))
        try s.apply(.connect(source: BusPoint(node: "src", bus: 0), destination: BusPoint(node: "mix", bus: 0)))
        try s.apply(.connect(source: BusPoint(node: "mix", bus: 0), destination: BusPoint(node: "out", bus: 0)))
        return s
    }

    func connect(_ a: String, _ ab: Int, _ b: String, _ bb: Int) -> StructuralEdit {
        .connect(source: BusPoint(node: a, bus: ab), destination: BusPoint(node: b, bus: bb))
    }

    func testEveryProblemOfAnEditInTheOrderTheDoorsReportThem() throws {
        let s = try makeStructure()
        let both = s.problems(connect("ghost", 0, "phantom", 0))
        XCTAssertEqual(both.map(\.site), [.source, .destination])
        XCTAssertEqual(both.map(\.error), [.nodeNotFound("ghost"), .nodeNotFound("phantom")])
        let buses = s.problems(connect("src", 1, "mix", 2))
        XCTAssertEqual(buses.map(\.error), [.busOutOfRange(node: "src", scope: .output, bus: 1, count: 1),
                                            .busOutOfRange(node: "mix", scope: .input, bus: 2, count: 2)])
        XCTAssertEqual(s.problems(connect("src", 0, "mix", 0)).map(\.error), [.inputAlreadyConnected(node: "mix", bus: 0)])
        XCTAssertEqual(s.problems(connect("mix", 0, "mix", 1)).map(\.error), [.cycle(node: "mix")], "a node feeding itself")
        XCTAssertEqual(s.problems(.addNode(NodeShape(id: "mix", inputBusCount: 1, outputBusCount: 1, isOutput: false))).map(\.error),
                       [.duplicateNode("mix")])
        XCTAssertEqual(s.problems(.disconnect(BusPoint(node: "mix", bus: 1))).map(\.error), [.inputNotConnected(node: "mix", bus: 1)])
        XCTAssertEqual(s.problems(.disconnect(BusPoint(node: "mix", bus: 5))).map(\.error),
                       [.busOutOfRange(node: "mix", scope: .input, bus: 5, count: 2)])
        XCTAssertEqual(s.problems(.removeNode("ghost")).map(\.error), [.nodeNotFound("ghost")])
        XCTAssertEqual(s.problems(connect("src", 0, "mix", 1)).count, 0)
    }

    func testACycleThroughSeveralNodesIsRefusedAndNothingChanges() throws {
        var s = try makeStructure()
        try s.apply(.addNode(NodeShape(id: "fx", inputBusCount: 1, outputBusCount: 1, isOutput: false)))
        try s.apply(connect("mix", 0, "fx", 0))
        XCTAssertThrowsError(try s.apply(connect("fx", 0, "mix", 1))) { XCTAssertEqual($0 as? AudioGraphError, .cycle(node: "mix")) }
        XCTAssertNil(s.connections[BusPoint(node: "mix", bus: 1)], "a refused edit leaves the structure as it was")
        XCTAssertTrue(s.reaches(from: "src", to: "fx"))
        XCTAssertFalse(s.reaches(from: "fx", to: "src"))
    }

    func testRemovingANodeTakesItsConnectionsAndTheOutputCountIsChecked() throws {
        var s = try makeStructure()
        XCTAssertNoThrow(try s.checkOutputCount())
        try s.apply(.removeNode("out"))
        XCTAssertEqual(s.connections.count, 1)
        XCTAssertEqual(s.outputIDs, [])
        XCTAssertThrowsError(try s.checkOutputCount()) { XCTAssertEqual($0 as? AudioGraphError, .outputNodeCount(0)) }
    }
}
