// A strict JSON parser that never crashes on any input (no recursion, bounded nesting).
import AudioGraphCore

/// Parses RFC 8259 JSON from bytes.
///
/// Strict: no comments, no trailing commas, no NaN/Infinity, no leading zeros, no control
/// characters in strings, valid UTF-8 and surrogate pairs only, no duplicate object keys, numbers
/// within `Double`'s range, nesting at most `maximumDepth` deep. The parser keeps open containers
/// on its own stack rather than recursing; the cap bounds what later recursive walks over the
/// value (comparison, destruction) need. A leading UTF-8 byte order mark is skipped.
///
/// Thread safety: a value used by one thread at a time.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 128

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error("the document is empty") }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected \(describeCurrent()) after the end of the document") }
        return value
    }

    // MARK: Values

    /// An array or object being read, waiting for its next element. Elements are appended in
    /// place (`stack[top].elements.append`): taking a container off the stack to append would
    /// copy its storage for every element and make long arrays quadratic.
    private struct OpenContainer {
        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [JSONMember] = []
        var seen: Set<String> = []
        var key = ""
    }

    /// Reads one value without recursion: open containers live on an explicit stack, so the
    /// native stack use does not grow with the nesting (only the depth cap bounds it).
    /// Linear in the document's length.
    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        var stack: [OpenContainer] = []
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of the document, expected a value") }
            var value: JSONValue
            switch bytes[index] {
            case UInt8(ascii: "{"):
                try enter()
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    depth -= 1
                    value = .object(JSONObject())
                } else {
                    var open = OpenContainer(isObject: true)
                    open.key = try parseKey(seen: &open.seen)
                    stack.append(open)
                    continue
                }
            case UInt8(ascii: "["):
                try enter()
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    depth -= 1
                    value = .array([])
                } else {
                    stack.append(OpenContainer(isObject: false))
                    continue
                }
            case UInt8(ascii: "\""): value = .string(try parseString())
            case UInt8(ascii: "t"): try expectLiteral("true"); value = .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); value = .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = .number(try parseNumber())
            default: throw error("unexpected \(describeCurrent()), expected a value")
            }
            // A complete value: add it to the open container, closing containers that end here.
            closing: while true {
                guard !stack.isEmpty else { return value }
                let top = stack.count - 1
                skipWhitespace()
                if stack[top].isObject {
                    stack[top].members.append(JSONMember(key: stack[top].key, value: value))
                    guard index < bytes.count else { throw error("unexpected end of the document inside an object") }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        stack[top].key = try parseKey(seen: &stack[top].seen)
                        break closing
                    }
                    guard bytes[index] == UInt8(ascii: "}") else {
                        throw error("unexpected \(describeCurrent()), expected ',' or '}' after an object member")
                    }
                    index += 1
                    depth -= 1
                    value = .object(JSONObject(stack.removeLast().members))
                } else {
                    stack[top].elements.append(value)
                    guard index < bytes.count else { throw error("unexpected end of the document inside an array") }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        break closing
                    }
                    guard bytes[index] == UInt8(ascii: "]") else {
                        throw error("unexpected \(describeCurrent()), expected ',' or ']' after an array element")
                    }
                    index += 1
                    depth -= 1
                    value = .array(stack.removeLast().elements)
                }
            }
        }
    }

    /// Reads `"key" :` (rejecting a key already in `seen`) and leaves the index at the value.
    private mutating func parseKey(seen: inout Set<String>) throws(JSONSyntaxError) -> String {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            throw error("unexpected \(describeCurrent()), expected a string key")
        }
        let keyStart = index
        let key = try parseString()
        guard seen.insert(key).inserted else {
            index = keyStart
            throw error("duplicate key \"\(key)\"")
        }
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
            throw error("unexpected \(describeCurrent()), expected ':' after key \"\(key)\"")
        }
        index += 1
        return key
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth { throw error("nesting deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONSyntaxError) {
        let expected = Array(literal.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<(index + expected.count)]) == expected else {
            throw error("unexpected \(describeCurrent()), expected a value")
        }
        index += expected.count
        if index < bytes.count, isIdentifierByte(bytes[index]) {
            throw error("unexpected \(describeCurrent()) after \(literal)")
        }
    }

    private func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }

    // MARK: Numbers

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONNumber {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw error("unexpected \(describeCurrent()), expected a digit")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("numbers must not have leading zeros") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("unexpected \(describeCurrent()), expected a digit after '.'")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("unexpected \(describeCurrent()), expected a digit in the exponent")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, isIdentifierByte(bytes[index]) || bytes[index] == UInt8(ascii: ".") {
            throw error("unexpected \(describeCurrent()) in a number")
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            index = start
            throw error("the number \(shown) is too large")
        }
        return JSONNumber(value, isInteger: isInteger, text: text)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    // MARK: Strings

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        var utf8: [UInt8] = []
        while true {
            guard index < bytes.count else {
                index = start
                throw error("unterminated string")
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    index = start
                    throw error("the string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { continue }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    utf8.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw error("invalid escape \\\(describeByte(escape)) in a string")
                }
            case 0x00..<0x20:
                throw error("control character U+\(hex4(UInt16(byte))) in a string (escape it)")
            default:
                utf8.append(byte)
                index += 1
            }
        }
    }

    /// Reads `XXXX` after `\u` (and a following `\uXXXX` low surrogate when needed).
    private mutating func parseUnicodeEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
        let high = try readHex4()
        if (0xD800...0xDBFF).contains(high) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("lone surrogate \\u\(hex4(high)) in a string")
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid surrogate pair in a string") }
            let value = 0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { throw error("invalid surrogate pair in a string") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(UInt32(high)) else { throw error("lone surrogate \\u\(hex4(high)) in a string") }
        return scalar
    }

    private mutating func readHex4() throws(JSONSyntaxError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw error("unterminated \\u escape") }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hexadecimal digit \(describeByte(byte)) in a \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    // MARK: Errors

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private func describeByte(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return String(UnicodeScalar(byte)) }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    private func describeCurrent() -> String {
        guard index < bytes.count else { return "end of the document" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "'\(String(UnicodeScalar(byte)))'" }
        return describeByte(byte)
    }

    /// An error at the current position, with line and column computed from the bytes before it.
    private func error(_ message: String) -> JSONSyntaxError {
        var line = 1
        var column = 1
        let end = min(index, bytes.count)
        var position = 0
        while position < end {
            let byte = bytes[position]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
            position += 1
        }
        return JSONSyntaxError(line: line, column: column, message: message)
    }
}
