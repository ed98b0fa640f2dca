// Error lines: file, location and message; the collection's lines.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class GraphDescriptionErrorTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    func testLineFormats() {
        let error = GraphDescriptionError(fileName: "bad.json", location: #"nodes[2] (id "echo").parameters.feedback"#,
                                          problem: .outOfRange(value: 150, range: "-100...100"))
        XCTAssertEqual(error.line, #"bad.json: nodes[2] (id "echo").parameters.feedback: 150 is outside -100...100"#)
        XCTAssertEqual(GraphDescriptionError(fileName: "g.json", location: "", problem: .cannotReadFile(reason: "no such file")).line,
                       "g.json: no such file")
        let errors = GraphDescriptionErrors([error, error])
        XCTAssertEqual(errors.lines.count, 2)
        XCTAssertEqual(errors.description, errors.lines.joined(separator: "\n"))
    }

    func testSuggestions() {
        XCTAssertEqual(GraphDescriptionProblem.closest(to: "paramters", in: ["id", "parameters", "properties"]), "parameters")
        XCTAssertEqual(GraphDescriptionProblem.closest(to: "Frequncy", in: ["frequency", "amplitude"]), "frequency")
        XCTAssertEqual(GraphDescriptionProblem.closest(to: "wetdrymix", in: ["wetDryMix", "feedback"]), "wetDryMix")
        XCTAssertEqual(GraphDescriptionProblem.closest(to: "lopp", in: ["loop", "file"]), "loop")  // a swap counts once
        XCTAssertNil(GraphDescriptionProblem.closest(to: "colour", in: ["waveform", "channels", "seed"]))
        XCTAssertNil(GraphDescriptionProblem.closest(to: "ab", in: ["xy"]))
        XCTAssertNil(GraphDescriptionProblem.closest(to: "b", in: ["a", "c"]))  // a tie suggests nothing
        XCTAssertEqual(GraphDescriptionProblem.editDistance(Array("kitten".unicodeScalars), Array("sitting".unicodeScalars)), 3)
        XCTAssertEqual(GraphDescriptionProblem.unknownKey("sampelRate", allowed: ["sampleRate", "nodes"]).message,
                       #"unknown key "sampelRate" (did you mean "sampleRate"?)"#)
    }

    func testMessages() {
        XCTAssertEqual(GraphDescriptionProblem.engine(.sampleRateMismatch(source: "a", sourceRate: 44100, destination: "b", destinationRate: 48000)).message,
                       #""a" outputs 44100 Hz but "b" runs at 48000 Hz and does not convert rates (put a converter between them)"#)
        XCTAssertEqual(GraphDescriptionProblem.outOfRange(value: 0.25, range: "1...2").message, "0.25 is outside 1...2")
        XCTAssertEqual(GraphDescriptionProblem.engine(.cycle(node: "a")).message, #"the connections form a cycle through "a""#)
        XCTAssertEqual(GraphDescriptionProblem.busOutOfRange(node: "m", bus: 1, count: 1, isInput: true).message,
                       #""m" has no input bus 1 (it has 1 input bus)"#)
        XCTAssertEqual(GraphDescriptionProblem.syntax(JSONSyntaxError(line: 2, column: 5, message: "boom")).message,
                       "invalid JSON at line 2, column 5: boom")
    }

    func testLinesStayOneLine() {
        let lines = errorLines(#"{ "version": 1, "nodes": [], "connections": [], "a\nb\u2028c": 1 }"#)
        XCTAssertEqual(lines, [
            #"graph.json: a\nb\u{2028}c: unknown key "a\nb\u{2028}c" (allowed: version, sampleRate, maximumFramesPerSlice, duration, nodes, connections, updates, taps)"#,
            #"graph.json: nodes: the graph has no output node (it needs exactly one "output" or "genericOutput")"#,
        ])
        let long = String(repeating: "k", count: 5000)
        let cut = errorLines(#"{ "version": 1, "nodes": [], "connections": [], "\#(long)": 1 }"#)[0]
        XCTAssertEqual(cut.count, GraphDescriptionError.maximumLineLength + 1)
        XCTAssertTrue(cut.hasSuffix("k…"))
    }
}
