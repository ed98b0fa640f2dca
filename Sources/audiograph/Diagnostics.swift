// Writing error lines to standard error, one line per problem.
import AudioGraphKit
import Foundation

/// One-line diagnostics on standard error.
enum Diagnostics {
    /// Writes `line` to standard error.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Writes every line of a description error.
    static func report(_ errors: GraphDescriptionErrors) {
        for line in errors.lines { error(line) }
    }

    /// Whether standard error is a terminal (progress bars only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
