// Writing error lines to standard error, one line per problem.
import ArgumentParser
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

    /// Loads and validates a graph file; on problems prints each as one line and exits with 1.
    static func loadGraph(_ path: String) throws -> ValidatedGraph {
        do {
            return try GraphLoader.load(path)
        } catch {
            report(error)
            throw ExitCode(ExitStatus.invalidInput)
        }
    }

    /// Whether standard error is a terminal (progress bars only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
