// The front doors agree: validate, AudioEngine(contentsOf:), AudioGraph's edits (the AUGraph-style API) and the engine API's edits.
@testable import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

/// One graph file through every front door, with the structural rules (``GraphStructure``) the
/// doors share: the same verdict, and for a structural refusal the same engine rule and message.
extension GraphLoaderRulesTests {
    /// The structural hostile set and the engine rule each breaks.
    static let structural: [(file: String, rule: AudioGraphError)] = [
        ("structural-missing-node.json", .nodeNotFound("ghost")),
        ("structural-bad-output-bus.json", .busOutOfRange(node: "osc", scope: .output, bus: 1, count: 1)),
        ("structural-bad-input-bus.json", .busOutOfRange(node: "mix", scope: .input, bus: 3, count: 2)),
        ("structural-taken-input.json", .inputAlreadyConnected(node: "d", bus: 0)),
        ("structural-cycle.json", .cycle(node: "mix")),
        ("structural-duplicate-id.json", .duplicateNode("osc")),
    ]

    static func hostile(_ name: String) -> String { GraphLoaderRulesTests.hostileFolder.appendingPathComponent(name).path }

    /// `validate`: accepted, or every line; and the engine rule of the first problem, if it is one.
    static func validate(_ path: String) -> (verdict: GraphLoaderRulesTests.Verdict, rule: AudioGraphError?) {
        do {
            _ = try GraphLoader.load(path)
            return (.accepted, nil)
        } catch {
            return (.refused(error.description), error.errors.first?.problem.engineError)
        }
    }

    /// `AudioEngine(contentsOf:)`: accepted, or the problems it throws.
    static func engineFromFile(_ path: String) -> GraphLoaderRulesTests.Verdict {
        do {
            _ = try AudioEngine(contentsOf: URL(fileURLWithPath: path))
            return .accepted
        } catch {
            guard case .graphFile(_, let problems) = error else { return .refused("\(error)") }
            return .refused(problems)
        }
    }

    /// The file's nodes and connections as JSON (ids, types, input bus counts; `node:bus` ends).
    struct Plain {
        var nodes: [(id: String, type: String, inputs: Int?)] = []
        var connections: [(from: String, fromBus: Int, to: String, toBus: Int)] = []

        init(_ path: String) throws {
            let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            for n in root["nodes"] as? [[String: Any]] ?? [] {
                nodes.append((n["id"] as? String ?? "", n["type"] as? String ?? "", n["inputBusCount"] as? Int))
            }
            func end(_ s: String) -> (String, Int) {
                let parts = s.split(separator: ":")
                return (String(parts[0]), parts.count > 1 ? Int(parts[1])! : 0)
            }
            for c in root["connections"] as? [[String: Any]] ?? [] {
                let (from, fromBus) = end(c["from"] as? String ?? "")
                let (to, toBus) = end(c["to"] as? String ?? "")
                connections.append((from, fromBus, to, toBus))
            }
        }
    }

    /// `AudioGraph`'s own edits (the AUGraph-style door): the file's nodes made by their types'
    /// factories, added and connected in file order, then resolved; the first refusal.
    static func audioGraph(_ plain: Plain) -> AudioGraphError? {
        GraphLoader.registerNodeTypes()
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 64)
        do throws(AudioGraphError) {
            for n in plain.nodes {
                guard let d = NodeTypeRegistry.descriptor(named: n.type) else { return .invalidProperty(node: n.id, name: "type", reason: n.type) }
                try graph.addNode(try d.makeNode(NodeBuildContext(id: n.id, sampleRate: 48000, inputBusCount: n.inputs ?? d.inputBuses.defaultCount,
                                                                  options: NoNodeOptions(), rendersOffline: true)))
            }
            for c in plain.connections { try graph.connect(c.from, outputBus: c.fromBus, to: c.to, inputBus: c.toBus) }
            _ = try graph.resolve()
            return nil
        } catch {
            return error
        }
    }

    func testTheFrontDoorsGiveTheSameVerdictOnEveryGraphFile() throws {
        let files = GraphLoaderRulesTests.graphFiles()
        XCTAssertGreaterThanOrEqual(files.filter { $0.contains("/hostile/structural-") }.count, Self.structural.count)
        var refused = 0
        for path in files {
            let (validate, _) = Self.validate(path)
            XCTAssertEqual(Self.engineFromFile(path), validate, "AudioEngine(contentsOf:) and validate on \(path)")
            if case .refused = validate { refused += 1 }
        }
        print("GraphLoaderRulesTests front doors: \(files.count) files through validate and AudioEngine(contentsOf:), \(refused) refused by both")
    }

    func testTheStructuralHostileSetBreaksTheSameRuleAtEveryDoor() throws {
        for (file, rule) in Self.structural {
            let path = Self.hostile(file)
            let (validate, fileRule) = Self.validate(path)
            guard case .refused(let lines) = validate else { XCTFail("\(file): validate accepts it"); continue }
            XCTAssertEqual(fileRule, rule, "\(file): validate's first problem: \(lines)")
            XCTAssertEqual(Self.engineFromFile(path), validate, "\(file): AudioEngine(contentsOf:)")
            let graphRule = Self.audioGraph(try Plain(path))
            XCTAssertEqual(graphRule, rule, "\(file): AudioGraph's edits")
            XCTAssertEqual(graphRule?.description, fileRule?.description, "\(file): the same message")
            // The rules themselves, written once: the first problem of the edits in file order.
            var structure = GraphStructure()
            var found: AudioGraphError?
            let plain = try Plain(path)
            for n in plain.nodes where found == nil {
                let d = try XCTUnwrap(NodeTypeRegistry.descriptor(named: n.type))
                do { try structure.apply(.addNode(NodeShape(id: n.id, inputBusCount: n.inputs ?? d.inputBuses.defaultCount,
                                                            outputBusCount: d.outputBusCount, isOutput: d.kind == .output))) } catch { found = error }
            }
            for c in plain.connections where found == nil {
                do { try structure.apply(.connect(source: BusPoint(node: c.from, bus: c.fromBus), destination: BusPoint(node: c.to, bus: c.toBus))) } catch { found = error }
            }
            XCTAssertEqual(found, rule, "\(file): GraphStructure")
        }
    }

    // MARK: The engine API: the same rules stop the program with its one-line message (as Apple's raises)

    /// The file's graph through the engine API's edits: each node an engine node of the same
    /// shape (a source: a player; a mixer; an effect: a delay; the output: the engine's own), a
    /// node the file does not define a node never attached, connected in file order.
    static func engineAPI(_ file: String) throws {
        let plain = try Plain(hostile(file))
        let engine = AudioEngine()
        var nodes: [String: AudioNode] = [:]
        for n in plain.nodes {
            switch n.type {
            case "oscillator": nodes[n.id] = AudioPlayerNode()
            case "mixer": nodes[n.id] = AudioMixerNode()
            case "delay": nodes[n.id] = AudioUnitDelay()
            default: nodes[n.id] = engine.outputNode
            }
            if nodes[n.id] !== engine.outputNode { engine.attach(nodes[n.id]!) }
        }
        for c in plain.connections {
            engine.connect(nodes[c.from] ?? AudioPlayerNode(), to: nodes[c.to] ?? AudioMixerNode(), fromBus: c.fromBus, toBus: c.toBus, format: nil)
        }
    }

    func testTheEngineAPIStopsOnTheMissingNode() throws {
        try assertEngineStops("GraphLoaderRulesTests/testTheEngineAPIStopsOnTheMissingNode",
                              expected: ["connect(_:to:fromBus:toBus:format:)", "AudioPlayerNode", "not attached"]) {
            try Self.engineAPI("structural-missing-node.json")
        }
    }

    func testTheEngineAPIStopsOnTheBadOutputBus() throws {
        try assertEngineStops("GraphLoaderRulesTests/testTheEngineAPIStopsOnTheBadOutputBus",
                              expected: ["connect(_:to:fromBus:toBus:format:)", "AudioPlayerNode", "output bus 1 does not exist (the node has 1)"]) {
            try Self.engineAPI("structural-bad-output-bus.json")
        }
    }

    func testTheEngineAPIStopsOnTheCycle() throws {
        try assertEngineStops("GraphLoaderRulesTests/testTheEngineAPIStopsOnTheCycle",
                              expected: ["connect(_:to:fromBus:toBus:format:)", "AudioMixerNode", "would make a cycle"]) {
            try Self.engineAPI("structural-cycle.json")
        }
    }
}
