// The formats of every node's buses after propagation from the sources to the output.
import AudioGraphCore

/// One node's resolved bus formats.
public struct NodeFormats: Sendable, Hashable {
    /// Per input bus: the format arriving there, nil when the bus is not connected (or its source's
    /// format could not be resolved).
    public var inputs: [BusFormat?]
    /// Per output bus: the format the node produces (empty for output nodes).
    public var outputs: [BusFormat]
    /// For `genericOutput`: the client format the application or file receives; nil otherwise.
    public var clientFormat: BusFormat?

    /// Creates node formats.
    public init(inputs: [BusFormat?], outputs: [BusFormat], clientFormat: BusFormat? = nil) {
        self.inputs = inputs
        self.outputs = outputs
        self.clientFormat = clientFormat
    }
}

/// Every node's bus formats after propagation (for `audiograph inspect` and the engine).
///
/// Thread safety: a value type; safe to share between threads.
public struct ResolvedFormats: Sendable, Hashable {
    /// By node id. A node whose formats could not be resolved (an unreadable file upstream) is absent.
    public var nodes: [String: NodeFormats]

    /// Creates resolved formats.
    public init(nodes: [String: NodeFormats] = [:]) { self.nodes = nodes }

    /// The formats of node `id`.
    public subscript(id: String) -> NodeFormats? { nodes[id] }
}
