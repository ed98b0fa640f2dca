// Writing error lines to standard error, one line per problem.
import AudioGraphOffline
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One-line diagnostics on standard error.
package enum Diagnostics {
    /// Writes `line` to standard error, its control characters escaped (``printable(_:)``).
    package static func error(_ line: String) {
        writeToStandardError(printable(line) + "\n")
    }

    /// Writes `text` to standard error as it is, whole (`write(2)` again after a short write or
    /// EINTR; a closed or full stderr drops the rest).
    package static func writeToStandardError(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(2, raw.baseAddress! + done, raw.count - done)
                if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }

    /// `line` with the control characters it may echo from input (a node name typed on `play`'s
    /// stdin, an id in a graph file: escape sequences, NUL, carriage returns) written as
    /// `\u{1b}`, so an error never drives the terminal or splits into lines. Tabs stay; a
    /// newline stays as the separator of a message that is several lines on purpose.
    package static func printable(_ line: String) -> String {
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
    package static func report(_ errors: GraphDescriptionErrors) {
        for line in errors.lines { error(line) }
    }

    /// Loads and validates a graph file; on problems prints each as one line and throws
    /// ``CommandFailure`` with status 1.
    package static func loadGraph(_ path: String) throws(CommandFailure) -> ValidatedGraph {
        do {
            return try GraphLoader.load(path)
        } catch {
            report(error)
            throw CommandFailure(ExitStatus.invalidInput)
        }
    }

    /// Whether standard error is a terminal (progress bars only then).
    package static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
