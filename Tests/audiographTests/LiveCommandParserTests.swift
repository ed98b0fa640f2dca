// Tests of LiveCommandParser: each stdin command of `audiograph play` becomes its typed LiveCommand, or its usage line.
import AudioGraphKit
import XCTest
@testable import audiograph_tool
import AudioGraphCommandLine

final class LiveCommandParserTests: XCTestCase {
    func testEachVerbBecomesItsCommand() throws {
        XCTAssertEqual(try LiveCommandParser.parse("set osc amplitude 0.1 0.01"),
                       .setParameter(node: "osc", address: "amplitude", value: 0.1, rampDuration: 0.01))
        XCTAssertEqual(try LiveCommandParser.parse("\tset  mix input.1.pan -0.5"),
                       .setParameter(node: "mix", address: "input.1.pan", value: -0.5, rampDuration: 0))
        XCTAssertEqual(try LiveCommandParser.parse("connect osc mix:3"),
                       .connect(source: BusReference(node: "osc"), destination: BusReference(node: "mix", bus: 3)))
        XCTAssertEqual(try LiveCommandParser.parse("disconnect out"), .disconnect(destination: BusReference(node: "out")))
        XCTAssertEqual(try LiveCommandParser.parse("update"), .update)
        XCTAssertNil(try LiveCommandParser.parse(" \t "))
    }

    func testMalformedLinesGiveTheirUsageLine() {
        let cases: [(String, String)] = [
            ("set osc amplitude", "usage: set NODE ADDRESS VALUE [RAMP]"),
            ("set osc amplitude loud", "usage: set NODE ADDRESS VALUE [RAMP]"),
            ("set osc amplitude 1 slowly", "usage: set NODE ADDRESS VALUE [RAMP]"),
            ("connect osc", "usage: connect FROM[:BUS] TO[:BUS]"),
            ("connect osc out:-1", "usage: connect FROM[:BUS] TO[:BUS]"),
            ("disconnect", "usage: disconnect TO[:BUS]"),
            ("update now", "usage: update"),
            ("frobnicate", "unknown command \"frobnicate\" (set, connect, disconnect, update)"),
        ]
        for (line, message) in cases {
            XCTAssertThrowsError(try LiveCommandParser.parse(line), line) { error in
                XCTAssertEqual("\(error)", message, line)
            }
        }
    }

    // MARK: Control bytes in errors (issue 22)

    /// A node name typed on stdin came back raw in the error line (an escape sequence cleared
    /// the screen, a NUL or carriage return garbled the line): every error line now escapes
    /// control characters; tabs and the newline of a multi-line message stay.
    func testErrorLinesEscapeControlCharacters() throws {
        XCTAssertEqual(Diagnostics.printable("node \"\u{1b}[2J\u{0}x\r\" does not exist"), #"node "\u{1b}[2J\u{0}x\u{d}" does not exist"#)
        XCTAssertEqual(Diagnostics.printable("a\tb\nc \u{9b}"), "a\tb\nc \\u{9b}")
        XCTAssertEqual(Diagnostics.printable("plain line"), "plain line")
        XCTAssertThrowsError(try LiveCommandParser.parse("\u{1b}[31mred 1 2")) { error in
            XCTAssertEqual(Diagnostics.printable("audiograph: \(error)"), #"audiograph: unknown command "\u{1b}[31mred" (set, connect, disconnect, update)"#)
        }
    }
}
