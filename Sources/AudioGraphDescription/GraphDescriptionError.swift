// The problems a graph file can have, each reported as one line naming the file and the place.
import AudioGraphCore

/// What is wrong at one place of a graph file. A closed set: every check of the loader maps to
/// one case.
public enum GraphDescriptionProblem: Sendable, Hashable {
    /// The file could not be read.
    case cannotReadFile(reason: String)
    /// The file is not valid JSON.
    case syntax(JSONSyntaxError)
    /// A key the format does not know at this place (a typo must not pass silently).
    case unknownKey(String, allowed: [String])
    /// A required key is absent.
    case missingKey(String)
    /// A value of the wrong JSON type (`expected` is e.g. "a number").
    case wrongType(expected: String, found: String)
    /// A string that is not one of the allowed names.
    case notOneOf(String, allowed: [String])
    /// A number outside its allowed range (`range` as the spec writes it, e.g. `-100...100`).
    case outOfRange(value: Double, range: String)
    /// A value that breaks another rule (a number that must be an integer, > 0, ...).
    case invalidValue(String)
    /// `version` is not 1.
    case unsupportedVersion(String)
    /// An id that does not match `[A-Za-z0-9_-]+`.
    case invalidIdentifier(String)
    /// An id used twice.
    case duplicateIdentifier(String, firstUsedAt: String)
    /// The graph does not have exactly one output node.
    case outputNodeCount(ids: [String])
    /// The graph has more nodes of one type than the type allows
    /// (``NodeTypeDescriptor/maximumPerGraph``: an `input`, at most one).
    case nodeTypeCount(type: String, ids: [String], maximum: Int)
    /// An address that is not a parameter of this node.
    case unknownParameter(address: String, reason: String)
    /// A reference to a node id that does not exist.
    case missingNode(String)
    /// A bus string that is not `node` or `node:N`.
    case invalidBusReference(String)
    /// A bus index beyond the node's bus count.
    case busOutOfRange(node: String, bus: Int, count: Int, isInput: Bool)
    /// An input bus fed by a second connection.
    case inputBusTaken(node: String, bus: Int, by: String)
    /// A node's declared format contradicts what the node produces.
    case formatConflict(String)
    /// A sound file that cannot be read.
    case unreadableAudioFile(node: String, file: String, reason: String)
    /// An automation event that breaks the Web Audio rules.
    case invalidAutomation(String)
    /// An update action that cannot apply to the graph as it is at that moment.
    case invalidUpdate(String)
    /// A tap file whose extension names no type we can write.
    case unsupportedTapFile(String, allowed: [String])
    /// A value or a need beyond what the loader accepts or the machine has (a time, a rate, the
    /// memory a node would take, a node count); the message names the limit.
    case limitExceeded(String)
    /// The engine's own graph rules refuse the graph (``AudioGraph``'s resolve step on the real
    /// nodes): the same error `initialize` or `update` would throw.
    case engine(AudioGraphError)

    /// The problem in words, without file or place.
    public var message: String {
        switch self {
        case .cannotReadFile(let reason): return reason
        case .syntax(let error): return "invalid JSON at \(error)"
        case .unknownKey(let key, let allowed):
            if allowed.isEmpty { return "unknown key \"\(key)\" (no keys are allowed here)" }
            if let suggestion = Self.closest(to: key, in: allowed) { return "unknown key \"\(key)\" (did you mean \"\(suggestion)\"?)" }
            return "unknown key \"\(key)\" (allowed: \(allowed.joined(separator: ", ")))"
        case .missingKey(let key): return "missing required key \"\(key)\""
        case .wrongType(let expected, let found): return "expected \(expected), found \(found)"
        case .notOneOf(let value, let allowed):
            if let suggestion = Self.closest(to: value, in: allowed) { return "\"\(value)\" is not one of \(allowed.joined(separator: ", ")) (did you mean \"\(suggestion)\"?)" }
            return "\"\(value)\" is not one of \(allowed.joined(separator: ", "))"
        case .outOfRange(let value, let range): return "\(ParameterInfo.format(value)) is outside \(range)"
        case .invalidValue(let message): return message
        case .limitExceeded(let message): return message
        case .engine(let error): return error.description
        case .unsupportedVersion(let version): return "version \(version) is not supported (only 1)"
        case .invalidIdentifier(let id): return "id \"\(id)\" must match [A-Za-z0-9_-]+"
        case .duplicateIdentifier(let id, let first): return "id \"\(id)\" is already used by \(first)"
        case .outputNodeCount(let ids):
            if ids.isEmpty { return "the graph has no output node (it needs exactly one \"output\" or \"genericOutput\")" }
            return "the graph has \(ids.count) output nodes (\(Self.quoted(ids))); it needs exactly one"
        case .nodeTypeCount(let type, let ids, let maximum):
            return "the graph has \(ids.count) \(type) nodes (\(Self.quoted(ids))); at most \(maximum == 1 ? "one is" : "\(maximum) are") allowed"
        case .unknownParameter(let address, let reason): return "\"\(address)\" is not a parameter: \(reason)"
        case .missingNode(let id): return "no node has the id \"\(id)\""
        case .invalidBusReference(let string): return "\"\(string)\" is not a bus (write \"node\" or \"node:N\")"
        case .busOutOfRange(let node, let bus, let count, let isInput):
            let kind = isInput ? "input" : "output"
            return "\"\(node)\" has no \(kind) bus \(bus) (it has \(count) \(kind) bus\(count == 1 ? "" : "es"))"
        case .inputBusTaken(let node, let bus, let by):
            return "input bus \(bus) of \"\(node)\" already has a connection (from \(by)); an input bus takes one connection"
        case .formatConflict(let message): return message
        case .unreadableAudioFile(let node, let file, let reason): return "cannot read \"\(file)\" for node \"\(node)\": \(reason)"
        case .invalidAutomation(let message): return message
        case .invalidUpdate(let message): return message
        case .unsupportedTapFile(let file, let allowed):
            return "cannot write \"\(file)\": the extension must be one of \(allowed.joined(separator: ", "))"
        }
    }

    /// The allowed word a misspelling most likely meant: edit distance at most 2 (1 for words of
    /// up to 4 letters), ignoring case; nil when none is that close or two are equally close.
    static func closest(to word: String, in candidates: [String]) -> String? {
        let lowered = Array(word.lowercased().unicodeScalars)
        guard lowered.count <= 64 else { return nil }
        var best: (candidate: String, distance: Int)?
        var tie = false
        for candidate in candidates {
            let distance = editDistance(lowered, Array(candidate.lowercased().unicodeScalars))
            if best == nil || distance < best!.distance {
                best = (candidate, distance)
                tie = false
            } else if distance == best!.distance {
                tie = true
            }
        }
        guard let best, !tie, best.distance > 0 || word != best.candidate else { return nil }
        let limit = min(word.count, best.candidate.count) <= 4 ? 1 : 2
        return best.distance <= limit ? best.candidate : nil
    }

    /// Optimal-string-alignment distance (insertions, deletions, substitutions, adjacent swaps).
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            previous2 = previous
            previous = current
        }
        return previous[b.count]
    }

    static func quoted(_ ids: [String], separator: String = ", ") -> String {
        ids.map { "\"\($0)\"" }.joined(separator: separator)
    }
}

/// One problem of a graph file, at one place.
///
/// Thread safety: a value type; safe to share between threads.
public struct GraphDescriptionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file as the caller named it.
    public var fileName: String
    /// The JSON location with the node id where there is one, e.g. `nodes[2] (id "echo").parameters.feedback`;
    /// empty for the document as a whole.
    public var location: String
    /// What is wrong.
    public var problem: GraphDescriptionProblem

    /// Creates an error.
    public init(fileName: String, location: String, problem: GraphDescriptionProblem) {
        self.fileName = fileName
        self.location = location
        self.problem = problem
    }

    /// The one-line message: `FILE: LOCATION: message` (or `FILE: message` without a location).
    /// Control characters from the file (a key with a newline in it) are escaped so the message
    /// stays on one line, and a line longer than ``maximumLineLength`` is cut.
    public var line: String {
        let text = location.isEmpty ? "\(fileName): \(problem.message)" : "\(fileName): \(location): \(problem.message)"
        return Self.oneLine(text)
    }

    /// The longest line ``line`` returns (in characters).
    public static let maximumLineLength = 2000

    static func oneLine(_ text: String) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= maximumLineLength {
                result += "…"
                break
            }
            switch scalar.value {
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x00..<0x20, 0x7F, 0x85, 0x2028, 0x2029: result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result
    }

    public var description: String { line }
}

/// Every problem found in a graph file (never empty), in the order found.
///
/// Thread safety: a value type; safe to share between threads.
public struct GraphDescriptionErrors: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems.
    public var errors: [GraphDescriptionError]

    /// Creates the collection.
    public init(_ errors: [GraphDescriptionError]) { self.errors = errors }

    /// One line per problem.
    public var lines: [String] { errors.map(\.line) }

    /// The lines joined with newlines.
    public var description: String { lines.joined(separator: "\n") }
}
