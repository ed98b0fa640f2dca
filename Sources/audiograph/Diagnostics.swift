// Writing error lines to standard error, one line per problem.
import ArgumentParser
import AudioGraphKit
import Foundation

/// One-line diagnostics on standard error.
enum Diagnostics {
    /// Writes `line` to standard error, its control characters escaped (``printable(_:)``).
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((printable(line) + "\n").utf8))
    }

    /// `line` with the control characters it may echo from input (a node name typed on `play`'s
    /// stdin, an id in a graph file: escape sequences, NUL, carriage returns) written as
    /// `\u{1b}`, so an error never drives the terminal or splits into lines. Tabs stay; a
    /// newline stays as the separator of a message that is several lines on purpose.
    static func printable(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: { isControl($0) }) else { return line }
        var out = ""
        for scalar in line.unicodeScalars {
            if isControl(scalar) { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    private static func isControl(_ s: Unicode.Scalar) -> Bool {
        (s.value < 0x20 && s != "\n" && s != "\t") || (0x7F...0x9F).contains(s.value)
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
