// Automation events: decoding and the Web Audio AudioParam rules, with exact messages.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class DescriptionReaderAutomationTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    /// A graph whose oscillator `osc` has `events` on `address` (frequency 0...24000 at 48 kHz).
    func graph(_ events: String, address: String = "frequency", parameters: String = "{}") -> String {
        """
        { "version": 1, "nodes": [ { "id": "osc", "type": "oscillator", "parameters": \(parameters), "automation": { "\(address)": [ \(events) ] } },
          { "id": "m", "type": "mixer" }, { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "m" }, { "from": "m", "to": "out" } ] }
        """
    }

    let prefix = #"graph.json: nodes[0] (id "osc").automation.frequency"#

    func testAllSixEventsDecode() throws {
        let loaded = try loadGraph(graph("""
        { "setValueAtTime": { "value": 220, "time": 0 } },
        { "linearRampToValueAtTime": { "value": 440, "time": 1 } },
        { "exponentialRampToValueAtTime": { "value": 880, "time": 2 } },
        { "setTargetAtTime": { "target": 100, "startTime": 2.5, "timeConstant": 0.1 } },
        { "setValueCurveAtTime": { "values": [100, 200, 300], "startTime": 3, "duration": 1 } },
        { "cancelScheduledValues": { "cancelTime": 3.5 } }
        """))
        XCTAssertEqual(loaded.description.nodes[0].automation, [ParameterAddress(name: "frequency"): [
            .setValue(value: 220, time: 0),
            .linearRamp(value: 440, time: 1),
            .exponentialRamp(value: 880, time: 2),
            .setTarget(target: 100, startTime: 2.5, timeConstant: 0.1),
            .setValueCurve(values: [100, 200, 300], startTime: 3, duration: 1),
            .cancelScheduledValues(cancelTime: 3.5),
        ]])
        XCTAssertEqual(AutomationEvent.setTarget(target: 1, startTime: 2.5, timeConstant: 1).time, 2.5)
    }

    func testValuesOutOfRangeAndShapes() {
        XCTAssertEqual(errorLines(graph("""
        { "setValueAtTime": { "value": 30000, "time": 0 } },
        { "linearRampToValueAtTime": { "value": 10, "time": -1 } },
        { "setTargetAtTime": { "target": 10, "startTime": 0, "timeConstant": 0 } },
        { "setValueCurveAtTime": { "values": [10], "startTime": 5, "duration": 0 } },
        { "setValueAtTime": { "value": 1 } },
        { "setValueAtTime": { "value": 1, "time": 0 }, "cancelScheduledValues": { "cancelTime": 0 } },
        { "jumpTo": { "value": 1 } },
        7
        """)), [
            "\(prefix)[0].setValueAtTime.value: 30000 is outside 0...24000",
            "\(prefix)[1].linearRampToValueAtTime.time: time -1 must not be negative",
            "\(prefix)[2].setTargetAtTime.timeConstant: timeConstant 0 must be greater than 0",
            "\(prefix)[3].setValueCurveAtTime.duration: duration 0 must be greater than 0",
            "\(prefix)[3].setValueCurveAtTime.values: a value curve needs at least 2 values, found 1",
            #"\#(prefix)[4].setValueAtTime: missing required key "time""#,
            "\(prefix)[5]: an event object has exactly one key (one of setValueAtTime, linearRampToValueAtTime, exponentialRampToValueAtTime, setTargetAtTime, setValueCurveAtTime, cancelScheduledValues), found 2",
            #"\#(prefix)[6].jumpTo: unknown key "jumpTo" (allowed: setValueAtTime, linearRampToValueAtTime, exponentialRampToValueAtTime, setTargetAtTime, setValueCurveAtTime, cancelScheduledValues)"#,
            "\(prefix)[7]: expected an event object, found a number",
        ])
    }

    func testExponentialRampRules() {
        XCTAssertEqual(errorLines(graph(#"{ "exponentialRampToValueAtTime": { "value": 0, "time": 1 } }"#)),
                       ["\(prefix)[0].exponentialRampToValueAtTime.value: an exponential ramp cannot reach 0"])
        // A value that is 0 in single precision (Web Audio's float argument) is a ramp to 0.
        XCTAssertEqual(errorLines(graph(#"{ "exponentialRampToValueAtTime": { "value": 1e-100, "time": 1 } }"#)),
                       ["\(prefix)[0].exponentialRampToValueAtTime.value: an exponential ramp cannot reach 0 (1e-100 is 0 in single precision)"])
        // From 0 and across 0: accepted (the ramp holds its start value until its end).
        XCTAssertNoThrow(try loadGraph(graph("""
        { "setValueAtTime": { "value": 0, "time": 0 } }, { "exponentialRampToValueAtTime": { "value": 100, "time": 1 } }
        """)))
        XCTAssertNoThrow(try loadGraph("""
        { "version": 1, "nodes": [ { "id": "osc", "type": "oscillator" },
          { "id": "m", "type": "mixer", "parameters": { "input.0.pan": -0.5 },
            "automation": { "input.0.pan": [ { "exponentialRampToValueAtTime": { "value": 0.5, "time": 1 } } ] } },
          { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "m" }, { "from": "m", "to": "out" } ] }
        """))
        // The default frequency 440 to 880 is fine.
        XCTAssertNoThrow(try loadGraph(graph(#"{ "exponentialRampToValueAtTime": { "value": 880, "time": 1 } }"#)))
    }

    func testCurveOverlapRules() {
        // An event strictly inside a later curve's span.
        XCTAssertEqual(errorLines(graph("""
        { "setValueAtTime": { "value": 100, "time": 1.5 } },
        { "setValueCurveAtTime": { "values": [1, 2], "startTime": 1, "duration": 1 } }
        """)), ["\(prefix)[1].setValueCurveAtTime: setValueCurveAtTime from 1 s to 2 s overlaps the setValueAtTime at 1.5 s"])
        // An event inside an earlier curve's [T, T + D).
        XCTAssertEqual(errorLines(graph("""
        { "setValueCurveAtTime": { "values": [1, 2], "startTime": 1, "duration": 1 } },
        { "linearRampToValueAtTime": { "value": 100, "time": 1 } }
        """)), ["\(prefix)[1].linearRampToValueAtTime: linearRampToValueAtTime at 1 s falls inside the setValueCurveAtTime from 1 s to 2 s"])
        // At the curve's end, and a curve starting where another event is: allowed (Web Audio).
        XCTAssertNoThrow(try loadGraph(graph("""
        { "setValueAtTime": { "value": 100, "time": 1 } },
        { "setValueCurveAtTime": { "values": [1, 2], "startTime": 1, "duration": 1 } },
        { "setValueAtTime": { "value": 100, "time": 2 } }
        """)))
        // A cancel removes the events it covers, so a curve may then go there.
        XCTAssertNoThrow(try loadGraph(graph("""
        { "setValueAtTime": { "value": 100, "time": 1.5 } }, { "cancelScheduledValues": { "cancelTime": 1.2 } },
        { "setValueCurveAtTime": { "values": [1, 2], "startTime": 1, "duration": 1 } }
        """)))
    }

    func testAddressesAndBooleanParameters() {
        XCTAssertEqual(errorLines(graph(#"{ "setValueAtTime": { "value": 1, "time": 0 } }"#, address: "detune")),
                       [#"graph.json: nodes[0] (id "osc").automation.detune: "detune" is not a parameter: an oscillator node has frequency, amplitude"#])
        XCTAssertEqual(errorLines("""
        { "version": 1, "nodes": [ { "id": "osc", "type": "oscillator" },
          { "id": "m", "type": "mixer", "automation": { "input.0.enable": [ { "setValueAtTime": { "value": 0, "time": 1 } },
                                                                            { "setValueAtTime": { "value": 0.5, "time": 2 } },
                                                                            { "linearRampToValueAtTime": { "value": 1, "time": 3 } } ] } },
          { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "m" }, { "from": "m", "to": "out" } ] }
        """), [
            #"graph.json: nodes[1] (id "m").automation.input.0.enable[1].setValueAtTime.value: 0.5 must be 0 or 1"#,
            #"graph.json: nodes[1] (id "m").automation.input.0.enable[2].linearRampToValueAtTime: input.0.enable is 0 or 1: only setValueAtTime and cancelScheduledValues apply to it"#,
        ])
    }

    func testRampAfterATargetStartingAtZeroIsAcceptedLikeTheEngineDoes() {
        // setTarget starts from the value at its start time (0 here), and the exponential ramp
        // after it starts there: the engine's timeline holds 0 until the ramp's end, so the
        // loader accepts it too.
        XCTAssertNoThrow(try loadGraph(graph("""
        { "setValueAtTime": { "value": 0, "time": 0 } },
        { "setTargetAtTime": { "target": 100, "startTime": 1, "timeConstant": 0.5 } },
        { "exponentialRampToValueAtTime": { "value": 200, "time": 2 } }
        """)))
    }

    func testCancelRemovesAValueCurveInProgress() {
        // The curve from 1 s to 3 s is in progress at the cancel time 2 s: it is removed, so a
        // new event may go inside its former span.
        XCTAssertNoThrow(try loadGraph(graph("""
        { "setValueCurveAtTime": { "values": [1, 2], "startTime": 1, "duration": 2 } },
        { "cancelScheduledValues": { "cancelTime": 2 } },
        { "setValueAtTime": { "value": 100, "time": 1.5 } }
        """)))
        // A cancel at the curve's end keeps it.
        XCTAssertEqual(errorLines(graph("""
        { "setValueCurveAtTime": { "values": [1, 2], "startTime": 1, "duration": 2 } },
        { "cancelScheduledValues": { "cancelTime": 3 } },
        { "setValueAtTime": { "value": 100, "time": 1.5 } }
        """)), ["\(prefix)[2].setValueAtTime: setValueAtTime at 1.5 s falls inside the setValueCurveAtTime from 1 s to 3 s"])
    }
}
