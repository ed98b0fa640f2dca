// Tests of GraphInspection: the text and Graphviz views name the nodes, buses and formats.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class GraphInspectionTests: XCTestCase {
    private func graph() throws -> ValidatedGraph {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("in.wav").path, [[Float](repeating: 0.1, count: 441), [Float](repeating: 0.2, count: 441)],
                     sampleRate: 44100)
        return try parseGraph("""
            { "version": 1, "sampleRate": 48000,
              "nodes": [ { "id": "osc", "type": "oscillator", "properties": { "channels": 2 } },
                         { "id": "p", "type": "player", "properties": { "file": "in.wav" } },
                         { "id": "mix", "type": "mixer", "inputBusCount": 3 },
                         { "id": "out", "type": "genericOutput", "properties": { "format": { "sampleType": "int16" } } } ],
              "connections": [ { "from": "osc", "to": "mix" }, { "from": "p", "to": "mix:1" }, { "from": "mix", "to": "out" } ],
              "updates": [ { "frame": 100, "actions": [ { "disconnect": { "to": "mix:1" } } ] } ],
              "taps": [ { "node": "p", "file": "tap.wav" } ] }
            """, in: dir)
    }

    func testTextNamesNodesBusesAndFormats() throws {
        let text = GraphInspection.text(try graph())
        for expected in [
            "graph graph.json: 48000 Hz",
            "  osc (oscillator)\n    output 0: 48000 Hz, 2 ch, float32, non-interleaved",
            "  p (player)\n    output 0: 44100 Hz, 2 ch, float32, non-interleaved",
            "    input 1: 44100 Hz, 2 ch, float32, non-interleaved <- p",  // as it arrives (the mixer converts)
            "render length 0.01 s",  // the player: 441 frames at 44.1 kHz
            "    input 2: unconnected",
            "  out (genericOutput)",
            "    client format: 48000 Hz, 2 ch, int16",
            "  p -> mix:1",
            "  at frame 100: disconnect",
            "  p:0 -> ",
        ] {
            XCTAssertTrue(text.contains(expected), "missing \(expected.debugDescription) in:\n\(text)")
        }
    }

    func testDotIsAGraphvizDigraph() throws {
        let dot = GraphInspection.dot(try graph())
        XCTAssertTrue(dot.hasPrefix("digraph \"graph.json\" {"), dot)
        XCTAssertTrue(dot.hasSuffix("}\n"))
        for expected in ["\"osc\" [label=\"osc\\noscillator\\n48000 Hz, 2 ch\"]", "\"p\" [label=\"p\\nplayer\\n44100 Hz, 2 ch\"]",
                         "\"out\" [label=\"out\\ngenericOutput\"]", "\"p\" -> \"mix\" [label=\"0→1\"]", "\"mix\" -> \"out\""] {
            XCTAssertTrue(dot.contains(expected), "missing \(expected) in:\n\(dot)")
        }
        // Balanced braces and quotes.
        XCTAssertEqual(dot.filter { $0 == "{" }.count, dot.filter { $0 == "}" }.count)
        XCTAssertEqual(dot.filter { $0 == "\"" }.count % 2, 0)
    }
}
