// The five invalid conformance cases (graphs copied inline): each error line holds what the case demands.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class ConformanceInvalidCasesTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    /// Asserts that one line contains every item of `contains`; an inner array means any one of them.
    func assertOneLine(_ lines: [String], contains: [[String]], maximumLines: Int = 5, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertLessThanOrEqual(lines.count, maximumLines, "\(lines)", file: file, line: line)
        let matching = lines.first { text in contains.allSatisfy { options in options.contains { text.contains($0) } } }
        XCTAssertNotNil(matching, "no line contains all of \(contains): \(lines)", file: file, line: line)
    }

    func testUnknownKey() {
        let lines = errorLines("""
        {
          "version": 1,
          "sampleRate": 48000,
          "duration": 0.5,
          "nodes": [
            { "id": "osc", "type": "oscillator",
              "paramters": { "frequency": 440 } },
            { "id": "out", "type": "genericOutput" }
          ],
          "connections": [
            { "from": "osc", "to": "out" }
          ]
        }
        """)
        assertOneLine(lines, contains: [["graph.json"], ["paramters"]])
        XCTAssertEqual(lines, [#"graph.json: nodes[0] (id "osc").paramters: unknown key "paramters" (did you mean "parameters"?)"#])
    }

    func testOutOfRange() {
        let lines = errorLines("""
        {
          "version": 1,
          "sampleRate": 48000,
          "duration": 0.5,
          "nodes": [
            { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 } },
            { "id": "echo", "type": "delay", "parameters": { "delayTime": 0.25, "feedback": 150 } },
            { "id": "out", "type": "genericOutput" }
          ],
          "connections": [
            { "from": "osc", "to": "echo" },
            { "from": "echo", "to": "out" }
          ]
        }
        """)
        assertOneLine(lines, contains: [["graph.json"], ["echo", "nodes[1]"], ["feedback"]])
        XCTAssertEqual(lines, [#"graph.json: nodes[1] (id "echo").parameters.feedback: 150 is outside -100...100"#])
    }

    func testCycle() {
        let lines = errorLines("""
        {
          "version": 1,
          "sampleRate": 48000,
          "duration": 0.5,
          "nodes": [
            { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 } },
            { "id": "mix", "type": "mixer", "inputBusCount": 2 },
            { "id": "d1", "type": "delay", "parameters": { "delayTime": 0.1, "feedback": 0 } },
            { "id": "out", "type": "genericOutput" }
          ],
          "connections": [
            { "from": "osc", "to": "mix:0" },
            { "from": "mix", "to": "d1" },
            { "from": "d1", "to": "mix:1" },
            { "from": "mix", "to": "out" }
          ]
        }
        """)
        assertOneLine(lines, contains: [["graph.json"], ["mix", "d1"]])
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.contains("cycle") == true, "\(lines)")
    }

    func testRateMismatchIntoEQ() {
        let lines = errorLines("""
        {
          "version": 1,
          "sampleRate": 48000,
          "duration": 0.5,
          "nodes": [
            { "id": "src", "type": "player", "properties": { "file": "tone_44k1.wav" } },
            { "id": "eq1", "type": "eq", "format": { "sampleRate": 48000 },
              "properties": { "bands": [ { "type": "peak", "frequency": 1000, "gain": 3 } ] } },
            { "id": "out", "type": "genericOutput" }
          ],
          "connections": [
            { "from": "src", "to": "eq1" },
            { "from": "eq1", "to": "out" }
          ]
        }
        """, files: ["tone_44k1.wav": AudioFileInfo(sampleRate: 44100, channels: 1, frames: 22050)])
        assertOneLine(lines, contains: [["graph.json"], ["src"], ["eq1"], ["44100", "44.1"], ["48000", "48 kHz", "48kHz", "48.0"]])
        XCTAssertEqual(lines, [#"graph.json: connections[0]: "src" outputs 44100 Hz but "eq1" runs at 48000 Hz and does not convert rates (put a converter between them)"#])
    }

    func testMissingNode() {
        let lines = errorLines("""
        {
          "version": 1,
          "sampleRate": 48000,
          "duration": 0.5,
          "nodes": [
            { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 } },
            { "id": "out", "type": "genericOutput" }
          ],
          "connections": [
            { "from": "osc", "to": "ghost" },
            { "from": "osc", "to": "out" }
          ]
        }
        """)
        assertOneLine(lines, contains: [["graph.json"], ["ghost"]])
        XCTAssertEqual(lines, [#"graph.json: connections[0].to: no node has the id "ghost""#])
    }
}
