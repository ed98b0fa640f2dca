// Where and why a JSON document failed to parse.
import AudioGraphCore

/// A JSON syntax error with its 1-based line and column (columns count characters).
///
/// Thread safety: a value type; safe to share between threads.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based line of the offending character.
    public var line: Int
    /// 1-based column (in Unicode scalars) of the offending character.
    public var column: Int
    /// What is wrong, e.g. `expected ',' or '}' after an object member`.
    public var message: String

    /// Creates an error.
    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// `line 3, column 14: message`.
    public var description: String { "line \(line), column \(column): \(message)" }
}
