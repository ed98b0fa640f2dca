// The text commands `audiograph play` reads on stdin, parsed into the library's typed LiveCommand.
import AudioGraphCommandLine
import AudioGraphKit

/// Parses one stdin line of `audiograph play`: `set NODE ADDRESS VALUE [RAMP]`,
/// `connect FROM[:BUS] TO[:BUS]`, `disconnect TO[:BUS]` or `update` (words split by spaces and
/// tabs; an empty line is no command).
///
/// Thread safety: pure functions; any thread.
enum LiveCommandParser {
    /// Why a line is not a command: the one line the CLI prints.
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// A known verb with the wrong words; carries its usage line.
        case usage(String)
        /// A verb the player does not know.
        case unknownVerb(String)

        var description: String {
            switch self {
            case .usage(let usage): return "usage: \(usage)"
            case .unknownVerb(let verb): return "unknown command \"\(verb)\" (set, connect, disconnect, update)"
            }
        }
    }

    /// The command on `line`, nil for a blank line.
    static func parse(_ line: String) throws(Failure) -> LiveCommand? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { return nil }
        switch verb {
        case "set":
            guard words.count == 4 || words.count == 5, let value = Double(words[3]) else {
                throw .usage("set NODE ADDRESS VALUE [RAMP]")
            }
            var ramp = 0.0
            if words.count == 5 {
                guard let r = Double(words[4]) else { throw .usage("set NODE ADDRESS VALUE [RAMP]") }
                ramp = r
            }
            return .setParameter(node: words[1], address: words[2], value: value, rampDuration: ramp)
        case "connect":
            guard words.count == 3, let from = BusReference(words[1]), let to = BusReference(words[2]) else {
                throw .usage("connect FROM[:BUS] TO[:BUS]")
            }
            return .connect(source: from, destination: to)
        case "disconnect":
            guard words.count == 2, let to = BusReference(words[1]) else { throw .usage("disconnect TO[:BUS]") }
            return .disconnect(destination: to)
        case "update":
            guard words.count == 1 else { throw .usage("update") }
            return .update
        default:
            throw .unknownVerb(verb)
        }
    }
}
