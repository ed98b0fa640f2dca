// The errors the engine throws on control threads (never on the render thread).

/// An error from a graph or node call. Thrown on control threads only.
public enum AudioGraphError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No node with this id is in the graph.
    case nodeNotFound(String)
    /// A node with this id is already in the graph.
    case duplicateNode(String)
    /// `node` has no `scope` bus `bus` (it has `count`).
    case busOutOfRange(node: String, scope: Scope, bus: Int, count: Int)
    /// The input bus already has a connection (an input takes one).
    case inputAlreadyConnected(node: String, bus: Int)
    /// The input bus has no connection to remove.
    case inputNotConnected(node: String, bus: Int)
    /// The connection would close a cycle through `node`.
    case cycle(node: String)
    /// A connection joins two sample rates into a node that does not convert.
    case sampleRateMismatch(source: String, sourceRate: Double, destination: String, destinationRate: Double)
    /// The node cannot work with this format (channel count, rate, sample type).
    case formatNotSupported(node: String, reason: String)
    /// A graph must have exactly one output node; it has `count`.
    case outputNodeCount(Int)
    /// No parameter at this address on the node.
    case parameterNotFound(node: String, address: String)
    /// A value outside the parameter's range (an error, never a clamp).
    case parameterOutOfRange(node: String, address: String, value: Double, range: String)
    /// No property of this name on the node, or a value of the wrong kind.
    case invalidProperty(node: String, name: String, reason: String)
    /// The call is not allowed in the graph's current state (e.g. `start` before `initialize`).
    case invalidState(String)
    /// A node type is known to the format but not built.
    case notSupportedYet(type: String)
    /// A node failed to set up (a file that cannot be read, a library error).
    case nodeSetupFailed(node: String, reason: String)
    /// A C library the node needs (loaded on first use, not at start-up) cannot be loaded:
    /// `library` is its name (`libfftw3f`), `reason` the loader's (naming the shared object).
    case libraryNotLoadable(node: String, library: String, reason: String)
    /// The render worker threads for ``AudioGraph/renderThreadCount`` could not be created
    /// (`reason`: the system's error, e.g. too many threads).
    case renderThreadsUnavailable(requested: Int, reason: String)

    public var description: String {
        switch self {
        case .nodeNotFound(let id): return "node \"\(id)\" does not exist"
        case .duplicateNode(let id): return "a node with id \"\(id)\" already exists"
        case let .busOutOfRange(node, scope, bus, count):
            return "node \"\(node)\" has \(count) \(scope) bus\(count == 1 ? "" : "es"); bus \(bus) does not exist"
        case let .inputAlreadyConnected(node, bus): return "input bus \(bus) of \"\(node)\" already has a connection"
        case let .inputNotConnected(node, bus): return "input bus \(bus) of \"\(node)\" has no connection"
        case .cycle(let node): return "the connections form a cycle through \"\(node)\""
        case let .sampleRateMismatch(s, sr, d, dr):
            return "\"\(s)\" outputs \(ParameterInfo.format(sr)) Hz but \"\(d)\" runs at \(ParameterInfo.format(dr)) Hz "
                + "and does not convert rates (put a converter between them)"
        case let .formatNotSupported(node, reason): return "node \"\(node)\": \(reason)"
        case .outputNodeCount(let n): return "a graph needs exactly one output node; this one has \(n)"
        case let .parameterNotFound(node, address): return "node \"\(node)\" has no parameter \"\(address)\""
        case let .parameterOutOfRange(node, address, value, range):
            return "node \"\(node)\" parameter \(address): \(ParameterInfo.format(value)) is outside \(range)"
        case let .invalidProperty(node, name, reason): return "node \"\(node)\" property \(name): \(reason)"
        case .invalidState(let s): return s
        case .notSupportedYet(let type): return "node type \"\(type)\" is not supported yet"
        case let .nodeSetupFailed(node, reason): return "node \"\(node)\": \(reason)"
        case let .libraryNotLoadable(node, library, reason): return "node \"\(node)\": cannot load \(library): \(reason)"
        case let .renderThreadsUnavailable(requested, reason): return "cannot start \(requested) render threads: \(reason)"
        }
    }
}
