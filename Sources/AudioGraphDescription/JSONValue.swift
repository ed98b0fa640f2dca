// A JSON value as written in a graph file: keys in source order, numbers with their spelling.
import AudioGraphCore

/// A JSON number: its value, whether it was written as an integer, and its text.
///
/// Keeping the spelling lets the loader tell `1` from `1.0` (an integer key such as `channels`
/// rejects `1.5` but accepts `1`) and quote the number back to the user as written.
package struct JSONNumber: Sendable, Hashable {
    /// The value (always finite: the parser rejects numbers beyond the range of `Double`).
    package var value: Double
    /// True when written without a fraction or an exponent (`42`, `-7`).
    package var isInteger: Bool
    /// The number's text in the file.
    package var text: String

    /// Creates a number; `text` defaults to the shortest spelling of `value`.
    package init(_ value: Double, isInteger: Bool? = nil, text: String? = nil) {
        self.value = value
        let integral = value.isFinite && value == value.rounded() && abs(value) < 9.007_199_254_740_992e15
        self.isInteger = isInteger ?? integral
        self.text = text ?? (integral ? String(Int64(value)) : String(value))
    }

    /// The value as an `Int` when it was written as an integer and fits, nil otherwise.
    package var intValue: Int? {
        guard isInteger, value == value.rounded(), abs(value) <= 9.007_199_254_740_992e15 else { return nil }
        return Int(value)
    }
}

/// One member of a JSON object.
package struct JSONMember: Sendable, Hashable {
    /// The key.
    package var key: String
    /// The value.
    package var value: JSONValue

    /// Creates a member.
    package init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// A JSON object with its members in source order (the parser rejects duplicate keys).
package struct JSONObject: Sendable, Hashable, Sequence {
    /// The members in source order.
    package var members: [JSONMember]

    /// Creates an object from members in order.
    package init(_ members: [JSONMember] = []) { self.members = members }

    /// The value for `key`, nil when absent.
    package subscript(key: String) -> JSONValue? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(JSONMember(key: key, value: newValue))
            }
        }
    }

    /// The keys in source order.
    package var keys: [String] { members.map(\.key) }

    /// Whether there are no members.
    package var isEmpty: Bool { members.isEmpty }

    package func makeIterator() -> IndexingIterator<[JSONMember]> { members.makeIterator() }
}

/// A parsed JSON value. `bool` and `number` are distinct (unlike `JSONSerialization` on Linux).
///
/// Thread safety: a value type; safe to share between threads.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The JSON type's name as used in error messages ("a number", "an object", ...).
    package var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Parses `bytes` as one JSON document (RFC 8259), or throws where it is malformed.
    package static func parse<Bytes: Collection>(_ bytes: Bytes) throws(JSONSyntaxError) -> JSONValue
    where Bytes.Element == UInt8 {
        var parser = JSONParser(Array(bytes))
        return try parser.parseDocument()
    }

    /// Parses `text` as one JSON document.
    package static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}
