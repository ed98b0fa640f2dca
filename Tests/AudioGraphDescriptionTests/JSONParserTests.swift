// The JSON parser: strictness, source order, number spelling, error positions, and never crashing.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes
import AudioGraphTesting

final class JSONParserTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }

    func syntaxError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONSyntaxError? {
        do {
            _ = try JSONValue.parse(text)
            XCTFail("\(text) parsed", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testObjectKeepsSourceOrder() throws {
        let value = try parse(#"{"z": 1, "a": 2, "m": 3}"#)
        guard case .object(let object) = value else { return XCTFail("not an object") }
        XCTAssertEqual(object.keys, ["z", "a", "m"])
        XCTAssertEqual(object["a"], .number(JSONNumber(2, isInteger: true, text: "2")))
        XCTAssertNil(object["b"])
    }

    func testBoolIsNotANumber() throws {
        XCTAssertEqual(try parse("true"), .bool(true))
        XCTAssertEqual(try parse("false"), .bool(false))
        XCTAssertEqual(try parse("null"), .null)
        guard case .number(let one) = try parse("1") else { return XCTFail("1 is not a number") }
        XCTAssertEqual(one.value, 1)
        XCTAssertNotEqual(try parse("1"), .bool(true))
    }

    func testNumbersKeepIntegerSpelling() throws {
        func number(_ text: String) throws -> JSONNumber {
            guard case .number(let number) = try parse(text) else { throw JSONSyntaxError(line: 0, column: 0, message: "not a number") }
            return number
        }
        XCTAssertTrue(try number("42").isInteger)
        XCTAssertEqual(try number("42").intValue, 42)
        XCTAssertFalse(try number("42.0").isInteger)
        XCTAssertNil(try number("42.0").intValue)
        XCTAssertFalse(try number("4e1").isInteger)
        XCTAssertEqual(try number("-0.5").value, -0.5)
        XCTAssertEqual(try number("1.5E+3").value, 1500)
        XCTAssertEqual(try number("1e-400").value, 0)  // underflows to 0: still a valid number
        XCTAssertEqual(try number("-7").text, "-7")
        XCTAssertNil(try number("123456789012345678901234567890").intValue)  // beyond 2^53: not an Int
    }

    func testStringsAndEscapes() throws {
        XCTAssertEqual(try parse(#""a\"b\\c\/d\b\f\n\r\t""#), .string("a\"b\\c/d\u{8}\u{c}\n\r\t"))
        XCTAssertEqual(try parse(#""\u00e9\u20AC""#), .string("é€"))
        XCTAssertEqual(try parse(#""\ud83c\udfb5""#), .string("🎵"))
        XCTAssertEqual(try parse("\"héllo\""), .string("héllo"))
    }

    func testNestedArraysAndWhitespace() throws {
        XCTAssertEqual(try parse(" [ 1 , [ ] , { } , \"x\" ]\n"),
                       .array([.number(JSONNumber(1)), .array([]), .object(JSONObject()), .string("x")]))
        XCTAssertEqual(try parse("\u{FEFF}[]"), .array([]))
    }

    func testDuplicateKeyIsAnErrorAtTheSecondKey() {
        let error = syntaxError("{\n  \"a\": 1,\n  \"a\": 2\n}")
        XCTAssertEqual(error, JSONSyntaxError(line: 3, column: 3, message: "duplicate key \"a\""))
    }

    func testErrorPositions() {
        XCTAssertEqual(syntaxError("{\"a\": 1,}")?.description, "line 1, column 9: unexpected '}', expected a string key")
        XCTAssertEqual(syntaxError("[1 2]")?.description, "line 1, column 4: unexpected '2', expected ',' or ']' after an array element")
        XCTAssertEqual(syntaxError("{\n\"é\": tru}")?.description, "line 2, column 6: unexpected 't', expected a value")
        XCTAssertEqual(syntaxError("")?.message, "the document is empty")
        XCTAssertEqual(syntaxError("[1] x")?.message, "unexpected 'x' after the end of the document")
        XCTAssertEqual(syntaxError("\"abc")?.message, "unterminated string")
    }

    func testRejectsWhatJSONDoesNotAllow() {
        for text in ["01", "1.", ".5", "+1", "-", "1e", "NaN", "Infinity", "[1,]", "{'a': 1}", "// c\n1", "\"a\u{1}\"",
                     #""\x""#, #""\ud800""#, #""\udc00""#, "truee", "nul", "[", "{", "{\"a\"}", "{\"a\" 1}", "0x10"] {
            XCTAssertNotNil(syntaxError(text), text)
        }
    }

    func testHugeNumberIsAnError() {
        XCTAssertEqual(syntaxError("[1e400]")?.message, "the number 1e400 is too large")
        let long = String(repeating: "9", count: 400)
        XCTAssertEqual(syntaxError(long)?.message, "the number \(String(long.prefix(40)))… is too large")
    }

    func testInvalidUTF8IsAnError() {
        XCTAssertThrowsError(try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]))  // bad continuation
        XCTAssertThrowsError(try JSONValue.parse([0x22, 0xFF, 0x22]))
        XCTAssertThrowsError(try JSONValue.parse([0x22, 0xED, 0xA0, 0x80, 0x22]))  // encoded surrogate
        XCTAssertThrowsError(try JSONValue.parse([0x5B, 0xFF, 0x5D]))  // outside a string
    }

    func testDeepNestingIsCappedNotACrash() throws {
        let ok = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        XCTAssertNoThrow(try parse(ok))
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertEqual(syntaxError(deep)?.message, "nesting deeper than \(JSONParser.maximumDepth) levels")
        let deepObjects = String(repeating: "{\"a\":", count: 50_000)
        XCTAssertNotNil(syntaxError(deepObjects))
    }

    /// The deepest accepted document parses on a thread with a small (256 KiB) stack: the
    /// depth cap keeps the parser's recursion well inside what any thread has.
    func testDeepestDocumentParsesOnASmallStack() {
        let depth = JSONParser.maximumDepth
        let text = String(repeating: "{\"a\":[", count: depth / 2) + "1" + String(repeating: "]}", count: depth / 2)
        // As deep as still fits inside a node's properties (document, nodes, node, properties: 4 levels).
        let inner = "{\"a\":" + String(repeating: "[", count: depth - 5) + String(repeating: "]", count: depth - 5) + "}"
        let done = expectation(description: "parsed")
        final class Box: @unchecked Sendable { var ok = false }
        let box = Box()
        let thread = Thread {
            box.ok = (try? JSONValue.parse(text)) != nil
            // The whole loader too, with the deep value where a property is expected.
            let graph = graphText(nodes: #"{ "id": "osc", "type": "oscillator", "properties": { "waveform": \#(inner) } }"#
                                  + #", { "id": "out", "type": "genericOutput" }"#, connections: #"{ "from": "osc", "to": "out" }"#)
            do {
                _ = try GraphDescription.parse(text: graph, fileInfo: { _ in AudioFileInfo(sampleRate: 1, channels: 1, frames: 1) })
                box.ok = false
            } catch let error as GraphDescriptionErrors {
                box.ok = box.ok && error.lines == [#"graph.json: nodes[0] (id "osc").properties.waveform: expected a string, found an object"#]
            } catch {
                box.ok = false
            }
            done.fulfill()
        }
        thread.stackSize = 256 * 1024
        thread.start()
        wait(for: [done], timeout: 10)
        XCTAssertTrue(box.ok)
    }

    /// Random and mutated inputs: the parser must return or throw, never trap. A seeded generator
    /// keeps the run reproducible; the loop is bounded.
    func testRandomAndMutatedBytesNeverCrash() {
        var generator = SeededRandom(seed: 0x5EED)
        let seed = Array("""
        {"version": 1, "nodes": [{"id": "a-1", "type": "oscillator", "parameters": {"frequency": 440.5e0}}],
         "connections": [], "x": [true, false, null, -0, "\\u00e9\\ud83c\\udfb5"]}
        """.utf8)
        XCTAssertNoThrow(try JSONValue.parse(seed))
        let alphabet = Array("{}[]\":,.-+eE0123456789truefalsn \\u\n".utf8) + [0x00, 0x80, 0xC3, 0xFF, 0xED]
        var parsed = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = seed
                for _ in 0..<(1 + Int(generator.next() % 4)) {
                    let position = Int(generator.next() % UInt64(bytes.count))
                    switch generator.next() % 3 {
                    case 0: bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                    case 1: bytes.remove(at: position)
                    default: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                    }
                }
            } else {
                let count = Int(generator.next() % 64)
                bytes = (0..<count).map { _ in
                    generator.next() % 4 == 0 ? UInt8(truncatingIfNeeded: generator.next()) : alphabet[Int(generator.next() % UInt64(alphabet.count))]
                }
            }
            if (try? JSONValue.parse(bytes)) != nil { parsed += 1 }
            // The whole loader must not crash on it either.
            _ = try? GraphDescription.parse(data: bytes, fileName: "fuzz.json", baseDirectory: ".", fileInfo: { _ in
                AudioFileInfo(sampleRate: 48000, channels: 1, frames: 48000)
            })
        }
        XCTAssertGreaterThan(parsed, 0)
    }
}

extension JSONParserTests {
    // MARK: Scale

    /// Seconds `body` takes, the best of three runs (the least disturbed by other load).
    static func bestTime(_ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        let clock = ContinuousClock()
        for _ in 0..<3 {
            let start = clock.now
            try body()
            let d = clock.now - start
            best = min(best, Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18)
        }
        return best
    }

    /// Parsing time grows linearly with array and object length: four times the elements take
    /// about four times as long (a quadratic parser takes sixteen; the bound 8 leaves room for the
    /// noise of a shared VM and for cache effects, and needs no wall-clock limit that load could break).
    func testParsingIsLinearInArrayAndObjectLength() throws {
        func array(_ n: Int) -> [UInt8] { Array(("[" + (0..<n).map { "{\"t\": \($0), \"v\": [1, 2]}" }.joined(separator: ",") + "]").utf8) }
        func object(_ n: Int) -> [UInt8] { Array(("{" + (0..<n).map { "\"k\($0)\": [\($0)]" }.joined(separator: ",") + "}").utf8) }
        for (name, make) in [("array", array), ("object", object)] {
            let small = make(20_000), large = make(80_000)
            let t20 = try Self.bestTime { _ = try JSONValue.parse(small) }
            let t80 = try Self.bestTime { _ = try JSONValue.parse(large) }
            print("JSON \(name): 20 000 elements \(t20) s, 80 000 elements \(t80) s, ratio \(t80 / t20)")
            XCTAssertLessThan(t80 / t20, 8, "\(name): 20 000 elements \(t20) s, 80 000 elements \(t80) s")
            guard case .array(let elements) = try JSONValue.parse(array(5)) else { return XCTFail("not an array") }
            XCTAssertEqual(elements.count, 5)
        }
    }
}
