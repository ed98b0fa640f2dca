// The validator's limits (issue 10): times, rates, latencies, node counts, conversion ratios,
// format changes in updates, delay memory, and linear time in the length of long arrays.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class GraphCheckerLimitsTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    let osc = #"{ "id": "osc", "type": "oscillator" }"#
    let out = #"{ "id": "out", "type": "genericOutput" }"#
    let wire = #"{ "from": "osc", "to": "out" }"#

    func testTimesBeyondTheLimitAreRejectedWithTheLimit() {
        let limit = "longer than the longest time accepted, 10000000 s"
        XCTAssertEqual(errorLines(graphText(nodes: "\(osc), \(out)", connections: wire, extra: #""duration": 1e300"#)),
                       ["graph.json: duration: 1e300 s is \(limit)"])
        XCTAssertEqual(errorLines(graphText(nodes: #"{ "id": "osc", "type": "oscillator", "properties": { "startTime": 1e15, "stopTime": 1e300 } }, \#(out)"#, connections: wire)), [
            #"graph.json: nodes[0] (id "osc").properties.startTime: 1e15 s is \#(limit)"#,
            #"graph.json: nodes[0] (id "osc").properties.stopTime: 1e300 s is \#(limit)"#,
        ])
        XCTAssertEqual(errorLines(graphText(nodes: #"{ "id": "p", "type": "player", "properties": { "file": "a.wav", "startTime": 1e8, "segment": { "start": 1e300, "duration": 1e15 } } }, \#(out)"#, connections: "",
                                            extra: ""), files: ["a.wav": AudioFileInfo(sampleRate: 48000, channels: 1, frames: 48000)]), [
            #"graph.json: nodes[0] (id "p").properties.startTime: 1e8 s is \#(limit)"#,
            #"graph.json: nodes[0] (id "p").properties.segment.start: 1e300 s is \#(limit)"#,
            #"graph.json: nodes[0] (id "p").properties.segment.duration: 1e15 s is \#(limit)"#,
        ])
        XCTAssertEqual(errorLines(graphText(nodes: "\(osc), \(out)", connections: wire, extra: #""updates": [ { "time": 1e300, "actions": [ { "setParameter": { "node": "osc", "address": "frequency", "value": 100, "rampDuration": 1e300 } } ] } ]"#)), [
            "graph.json: updates[0].time: 1e300 s is \(limit)",
            "graph.json: updates[0].actions[0].setParameter.rampDuration: 1e300 s is \(limit)",
        ])
        // Automation times have no limit but being finite, as in Web Audio (the W3C
        // `large-endtime` cases): 1e300 s and the largest double are accepted.
        XCTAssertNoThrow(try loadGraph(graphText(nodes: #"{ "id": "osc", "type": "oscillator", "automation": { "frequency": [ { "setValueAtTime": { "value": 100, "time": 1e300 } }, { "linearRampToValueAtTime": { "value": 200, "time": 1.7976931348623157e308 } } ], "amplitude": [ { "setValueCurveAtTime": { "values": [1, 0.5], "startTime": 1e308, "duration": 1e308 } } ] } }, \#(out)"#, connections: wire)))
        // The limit itself and the tiniest positive duration are accepted.
        XCTAssertNoThrow(try loadGraph(graphText(nodes: #"{ "id": "osc", "type": "oscillator", "properties": { "startTime": 10000000 }, "automation": { "frequency": [ { "setValueCurveAtTime": { "values": [1, 2], "startTime": 0, "duration": 5e-324 } } ] } }, \#(out)"#, connections: wire, extra: #""duration": 10000000"#)))
    }

    func testRatesAndLatenciesBeyondTheLimits() {
        let rates = "outside the rates accepted, 1...768000 Hz"
        XCTAssertEqual(errorLines(#"{ "version": 1, "sampleRate": 2147483648, "nodes": [ \#(osc), \#(out) ], "connections": [ \#(wire) ] }"#),
                       ["graph.json: sampleRate: 2147483648 Hz is \(rates)"])
        XCTAssertEqual(errorLines(#"{ "version": 1, "sampleRate": 0.5, "nodes": [ \#(osc), { "id": "out", "type": "genericOutput", "properties": { "format": { "sampleRate": 1e9 } } } ], "connections": [ \#(wire) ] }"#), [
            "graph.json: sampleRate: 0.5 Hz is \(rates)",
            #"graph.json: nodes[1] (id "out").properties.format.sampleRate: 1e9 Hz is \#(rates)"#,
        ])
        XCTAssertEqual(errorLines(graphText(nodes: #"{ "id": "p", "type": "player", "properties": { "file": "fast.wav" } }, \#(out)"#, connections: "",
                                            extra: ""), files: ["fast.wav": AudioFileInfo(sampleRate: 2_000_000, channels: 1, frames: 10)]),
                       [#"graph.json: nodes[0] (id "p").properties.file: cannot read "fast.wav" for node "p": its rate, 2000000 Hz, is \#(rates)"#])
        XCTAssertEqual(errorLines(graphText(nodes: #"{ "id": "o", "type": "output", "properties": { "latency": 1e300 } }, \#(osc)"#, connections: #"{ "from": "osc", "to": "o" }"#)),
                       [#"graph.json: nodes[0] (id "o").properties.latency: 1e+300 ms is more than the largest latency accepted, 10000 ms"#])
    }

    func testNodeCount() {
        let many = (0..<10_001).map { #"{ "id": "o\#($0)", "type": "oscillator" }"# }.joined(separator: ", ")
        XCTAssertEqual(errorLines(graphText(nodes: "\(many), \(out)", connections: "")),
                       ["graph.json: nodes: 10002 nodes are more than a graph may hold, 10000"], "one line, not one per node")
    }

    func testConversionRatiosBeyond256AreRejectedWhereTheyHappen() {
        let beyond = "beyond the largest ratio one conversion bridges (256:1 either way; convert in steps)"
        XCTAssertEqual(errorLines(graphText(nodes: #"\#(osc), { "id": "c", "type": "converter", "properties": { "format": { "sampleRate": 100 } } }, \#(out)"#,
                                            connections: #"{ "from": "osc", "to": "c" }, { "from": "c", "to": "out" }"#)),
                       [#"graph.json: nodes[1] (id "c"): node "c": cannot convert 48000 Hz to 100 Hz, \#(beyond)"#])
        XCTAssertEqual(errorLines(graphText(nodes: #"{ "id": "osc", "type": "oscillator", "format": { "sampleRate": 100 } }, { "id": "m", "type": "mixer" }, \#(out)"#,
                                            connections: #"{ "from": "osc", "to": "m" }, { "from": "m", "to": "out" }"#)),
                       [#"graph.json: nodes[1] (id "m"): node "m": cannot convert 100 Hz to 48000 Hz, \#(beyond)"#])
        XCTAssertEqual(errorLines(graphText(nodes: #"\#(osc), { "id": "out", "type": "genericOutput", "properties": { "format": { "sampleRate": 187 } } }"#, connections: wire)),
                       [#"graph.json: nodes[1] (id "out"): node "out": cannot convert 48000 Hz to 187 Hz, \#(beyond)"#])
        // Exactly 256 is fine.
        XCTAssertNoThrow(try loadGraph(graphText(nodes: #"\#(osc), { "id": "out", "type": "genericOutput", "properties": { "format": { "sampleRate": 187.5 } } }"#, connections: wire)))
    }

    /// An update that would change a running node's output format is refused, as the engine does.
    func testAnUpdateThatChangesARunningNodesFormatIsRejected() {
        let nodes = #"{ "id": "osc", "type": "oscillator", "properties": { "channels": 1 } }, { "id": "c", "type": "converter", "properties": { "format": { "sampleRate": 44100 } } }, \#(out)"#
        XCTAssertEqual(errorLines(graphText(nodes: nodes, connections: wire, extra: #""updates": [ { "time": 0.5, "actions": [ { "connect": { "from": "osc", "to": "c" } } ] } ]"#)),
                       [#"graph.json: updates[0]: node "c": its output format would change from ["44100 Hz, 2 ch, float32, non-interleaved"] to ["44100 Hz, 1 ch, float32, non-interleaved"] while initialized"#])
        // A node added by the update starts with whatever format it gets.
        XCTAssertNoThrow(try loadGraph(graphText(nodes: #"{ "id": "osc", "type": "oscillator", "properties": { "channels": 1 } }, \#(out)"#, connections: wire,
                                                 extra: #""updates": [ { "time": 0.5, "actions": [ { "addNode": { "id": "c", "type": "converter", "properties": { "format": { "sampleRate": 44100 } } } }, { "connect": { "from": "osc", "to": "c" } } ] } ]"#)))
    }

    func testDelayMemoryBeyondHalfTheMachineIsRejected() {
        let one = MemoryBudget.delayLineBytes(sampleRate: 768_000, channels: 256)
        let count = Int(MemoryBudget.limit / one) + 1
        let delays = (0..<count).map { #"{ "id": "d\#($0)", "type": "delay" }"# }.joined(separator: ", ")
        let wires = (0..<count).map { #"{ "from": "osc", "to": "d\#($0)" }"# }.joined(separator: ", ")
        let text = #"{ "version": 1, "sampleRate": 768000, "nodes": [ { "id": "osc", "type": "oscillator", "properties": { "channels": 256 } }, \#(delays), \#(out) ], "connections": [ \#(wire), \#(wires) ] }"#
        XCTAssertEqual(errorLines(text), [
            "graph.json: nodes: the nodes' delay lines and state need \(MemoryBudget.describe(one * Int64(count))) together, more than the \(MemoryBudget.describe(MemoryBudget.limit)) a graph may use (half this machine's memory)",
        ])
    }

    /// Many wide nodes with big slices: their buffers alone pass the limit.
    func testBufferMemoryBeyondHalfTheMachineIsRejected() {
        let one = MemoryBudget.sliceBytes(channels: 256, frames: 65536)
        XCTAssertEqual(one, 256 * 65536 * 4)
        let count = Int(MemoryBudget.limit / one) + 1
        let oscillators = (0..<count).map { #"{ "id": "o\#($0)", "type": "oscillator", "properties": { "channels": 256 } }"# }.joined(separator: ", ")
        let text = #"{ "version": 1, "maximumFramesPerSlice": 65536, "nodes": [ \#(oscillators), \#(out) ], "connections": [ { "from": "o0", "to": "out" } ] }"#
        XCTAssertEqual(errorLines(text), [
            "graph.json: nodes: the buffers of \(count) nodes (65536 frames per slice per channel) and their delay lines need \(MemoryBudget.describe(one * Int64(count))), more than the \(MemoryBudget.describe(MemoryBudget.limit)) a graph may use (half this machine's memory)",
        ])
        // One fewer node than the limit allows loads.
        let fewer = (0..<(count - 2)).map { #"{ "id": "o\#($0)", "type": "oscillator", "properties": { "channels": 256 } }"# }.joined(separator: ", ")
        XCTAssertNoThrow(try loadGraph(#"{ "version": 1, "maximumFramesPerSlice": 65536, "nodes": [ \#(fewer), \#(out) ], "connections": [ { "from": "o0", "to": "out" } ] }"#))
    }

    /// Validating a graph with 5 000 and 20 000 updates: linear growth, four times the updates in
    /// about four times the time (quadratic: sixteen; the bound 8 leaves room for a shared VM's
    /// noise: the parser's own 2x/bound-3 version of this test failed at 3.01x under load).
    func testValidationIsLinearInTheNumberOfUpdates() throws {
        func text(_ n: Int) -> String {
            let updates = (0..<n).map { #"{ "frame": \#($0 * 10), "actions": [ { "setParameter": { "node": "osc", "address": "frequency", "value": \#(100 + $0 % 1000) } } ] }"# }
            return graphText(nodes: "\(osc), \(out)", connections: wire, extra: "\"updates\": [ \(updates.joined(separator: ", ")) ]")
        }
        let small = text(5_000), large = text(20_000)
        let t5 = try JSONParserTests.bestTime { _ = try loadGraph(small) }
        let t20 = try JSONParserTests.bestTime { _ = try loadGraph(large) }
        print("validation: 5 000 updates \(t5) s, 20 000 updates \(t20) s, ratio \(t20 / t5)")
        XCTAssertLessThan(t20 / t5, 8, "5 000 updates \(t5) s, 20 000 updates \(t20) s")
    }
}
