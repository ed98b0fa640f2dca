// Updates: decoding, time or frame, and each entry applied to a simulated graph.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class UpdateDescriptionTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    /// osc1, osc2 -> mix:0, mix:1 -> out, with `updates`.
    func graph(_ updates: String) -> String {
        """
        { "version": 1, "nodes": [ { "id": "osc1", "type": "oscillator" }, { "id": "osc2", "type": "oscillator" },
            { "id": "p", "type": "player", "properties": { "file": "a.wav" } },
            { "id": "mix", "type": "mixer", "inputBusCount": 2 }, { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc1", "to": "mix:0" }, { "from": "osc2", "to": "mix:1" }, { "from": "mix", "to": "out" } ],
          "updates": [ \(updates) ] }
        """
    }

    let files = ["a.wav": AudioFileInfo(sampleRate: 48000, channels: 2, frames: 48000),
                 "b.wav": AudioFileInfo(sampleRate: 44100, channels: 2, frames: 44100)]

    func lines(_ updates: String) -> [String] { errorLines(graph(updates), files: files) }

    func testTimeOrFrame() {
        XCTAssertEqual(lines(#"{ "actions": [] }, { "time": 1, "frame": 2, "actions": [] }, { "frame": 1.5, "actions": [] }, { "time": -1, "actions": [] }"#), [
            #"graph.json: updates[0]: an update needs "time" (seconds) or "frame""#,
            #"graph.json: updates[1]: give either "time" or "frame", not both"#,
            "graph.json: updates[2].frame: 1.5 must be an integer",
            "graph.json: updates[3].time: -1 must not be negative",
        ])
        XCTAssertEqual(UpdateTime.time(0.5).frame(sampleRate: 44100), 22050)
        XCTAssertEqual(UpdateTime.frame(7).frame(sampleRate: 44100), 7)
    }

    func testActionShapes() {
        XCTAssertEqual(lines(#"{ "frame": 0, "actions": [ { "move": {} }, {}, { "connect": { "from": "osc1" } }, { "removeNode": 3 }, { "setParameter": { "node": "mix", "address": "volume", "value": 1, "rampDuration": -1 } } ] }"#), [
            #"graph.json: updates[0].actions[0].move: unknown key "move" (allowed: setParameter, connect, disconnect, addNode, removeNode, setProperty)"#,
            "graph.json: updates[0].actions[1]: an action object has exactly one key (one of setParameter, connect, disconnect, addNode, removeNode, setProperty), found 0",
            #"graph.json: updates[0].actions[2].connect: missing required key "to""#,
            "graph.json: updates[0].actions[3].removeNode: expected a string, found a number",
            "graph.json: updates[0].actions[4].setParameter.rampDuration: -1 must not be negative",
        ])
    }

    func testValidUpdatesLoadAndKeepFileOrder() throws {
        let loaded = try loadGraph(graph("""
        { "frame": 100, "actions": [ { "setParameter": { "node": "mix", "address": "input.0.volume", "value": 0.25 } } ] },
        { "time": 0.5, "actions": [ { "disconnect": { "to": "mix:1" } }, { "connect": { "from": "osc1", "to": "mix:1" } } ] },
        { "time": 1, "actions": [ { "addNode": { "id": "p2", "type": "player", "properties": { "file": "b.wav" } } },
                                  { "disconnect": { "to": "mix:0" } }, { "connect": { "from": "p2", "to": "mix:0" } },
                                  { "removeNode": "osc2" } ] }
        """), files: files)
        let updates = loaded.description.updates
        XCTAssertEqual(updates.map(\.when), [.frame(100), .time(0.5), .time(1)])
        XCTAssertEqual(updates[0].actions, [.setParameter(node: "mix", address: ParameterAddress("input.0.volume"), value: 0.25, rampDuration: 0)])
        XCTAssertEqual(updates[1].actions, [.disconnect(to: BusReference(node: "mix", bus: 1)),
                                            .connect(ConnectionDescription(from: BusReference(node: "osc1"), to: BusReference(node: "mix", bus: 1)))])
        XCTAssertEqual(updates[2].actions.map(\.name), ["addNode", "disconnect", "connect", "removeNode"])
        XCTAssertEqual(loaded.audioFiles.first { $0.key.hasSuffix("/b.wav") }?.value.sampleRate, 44100)
    }

    func testActionsAgainstTheSimulatedGraph() {
        XCTAssertEqual(lines("""
        { "frame": 10, "actions": [
            { "setParameter": { "node": "ghost", "address": "volume", "value": 1 } },
            { "setParameter": { "node": "mix", "address": "input.5.pan", "value": 0 } },
            { "setParameter": { "node": "mix", "address": "volume", "value": 9 } },
            { "connect": { "from": "osc1", "to": "mix:1" } },
            { "disconnect": { "to": "out:3" } },
            { "addNode": { "id": "osc1", "type": "oscillator" } },
            { "setProperty": { "node": "mix", "name": "channels", "value": 4 } },
            { "setProperty": { "node": "p", "name": "loop", "value": "yes" } },
            { "setProperty": { "node": "p", "name": "speed", "value": 2 } },
            { "setProperty": { "node": "p", "name": "segment", "value": { "start": 1.5 } } } ] }
        """), [
            #"graph.json: updates[0].actions[0].setParameter.node: no node has the id "ghost""#,
            #"graph.json: updates[0].actions[1].setParameter.address: "input.5.pan" is not a parameter: this mixer node has 2 input buses (input.0 to input.1); raise inputBusCount for input.5.pan"#,
            "graph.json: updates[0].actions[2].setParameter.value: 9 is outside 0...4",
            #"graph.json: updates[0].actions[3].connect.to: input bus 1 of "mix" already has a connection (from "osc2" in connections[1]); an input bus takes one connection"#,
            #"graph.json: updates[0].actions[4].disconnect.to: "out" has no input bus 3 (it has 1 input bus)"#,
            #"graph.json: updates[0].actions[5].addNode (id "osc1").id: id "osc1" is already used by nodes[0] (id "osc1")"#,
            #"graph.json: updates[0].actions[6].setProperty.name: "channels" of a mixer node cannot change while the graph runs (changeable: none)"#,
            "graph.json: updates[0].actions[7].setProperty.loop: expected true or false, found a string",
            #"graph.json: updates[0].actions[8].setProperty.name: "speed" of a player node is not a property of this node type (changeable: loop, startTime, segment)"#,
            #"graph.json: updates[0].actions[9].setProperty.value.start: 1.5 s is not before the end of "a.wav" (1 s)"#,
        ])
    }

    func testEntryMustLeaveAValidGraph() {
        // A cycle made by two connects in one entry.
        XCTAssertEqual(lines("""
        { "frame": 10, "actions": [ { "addNode": { "id": "d", "type": "delay" } }, { "disconnect": { "to": "mix:0" } },
                                    { "connect": { "from": "mix", "to": "d" } }, { "connect": { "from": "d", "to": "mix:0" } } ] }
        """), [#"graph.json: updates[0].actions[3]: the connections form a cycle through "mix""#])
        // A cycle closed by one action and opened again by a later one: the engine refuses the
        // connect when it is made, and so does the validator (found by fuzzing, issue 10).
        XCTAssertEqual(lines("""
        { "frame": 10, "actions": [ { "addNode": { "id": "d", "type": "delay" } }, { "connect": { "from": "d", "to": "d" } },
                                    { "removeNode": "d" } ] }
        """), [#"graph.json: updates[0].actions[1]: the connections form a cycle through "d""#])
        // Removing the output.
        XCTAssertEqual(lines(#"{ "frame": 10, "actions": [ { "removeNode": "out" } ] }"#),
                       [#"graph.json: updates[0]: the graph has no output node (it needs exactly one "output" or "genericOutput")"#])
        // Disconnecting a bus that is free at that moment (after an earlier entry freed it).
        XCTAssertEqual(lines("""
        { "frame": 20, "actions": [ { "disconnect": { "to": "mix:1" } } ] },
        { "frame": 10, "actions": [ { "disconnect": { "to": "mix:1" } } ] }
        """), [#"graph.json: updates[0].actions[0].disconnect.to: nothing is connected to "mix:1" at this point"#])
        // A node removed earlier is missing later.
        XCTAssertEqual(lines("""
        { "frame": 10, "actions": [ { "removeNode": "osc2" } ] },
        { "frame": 20, "actions": [ { "connect": { "from": "osc2", "to": "mix:1" } } ] }
        """), [#"graph.json: updates[1].actions[0].connect.from: no node has the id "osc2""#])
    }

    func testRateMismatchMadeByAnUpdate() {
        XCTAssertEqual(lines("""
        { "frame": 10, "actions": [ { "addNode": { "id": "p2", "type": "player", "properties": { "file": "b.wav" } } },
                                    { "addNode": { "id": "d", "type": "delay", "format": { "sampleRate": 48000 } } },
                                    { "connect": { "from": "p2", "to": "d" } }, { "disconnect": { "to": "mix:0" } },
                                    { "connect": { "from": "d", "to": "mix:0" } } ] }
        """), [#"graph.json: updates[0]: "p2" outputs 44100 Hz but "d" runs at 48000 Hz and does not convert rates (put a converter between them)"#])
    }

    func testAddedNodeIsValidatedLikeAnyNode() {
        XCTAssertEqual(lines(#"{ "frame": 10, "actions": [ { "addNode": { "id": "d2", "type": "delay", "parameters": { "delayTime": 3 } } } ] }"#),
                       [#"graph.json: updates[0].actions[0].addNode (id "d2").parameters.delayTime: 3 is outside 0...2"#])
    }

    func testSetPropertyChecksRulesBetweenKeys() {
        let text = """
        { "version": 1, "nodes": [ { "id": "osc", "type": "oscillator", "properties": { "startTime": 0.5, "stopTime": 1 } },
            { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "out" } ],
          "updates": [ { "time": 0.1, "actions": [ { "setProperty": { "node": "osc", "name": "startTime", "value": 2 } } ] } ] }
        """
        XCTAssertEqual(errorLines(text), ["graph.json: updates[0].actions[0].setProperty.stopTime: stopTime 1 must be after startTime 2"])
    }
}
