// The formats of every node's buses after propagation from the sources to the output.
import AudioGraphCore

/// One node's resolved bus formats.
package struct NodeFormats: Sendable, Hashable {
    /// Per input bus: the format arriving there, nil when the bus is not connected (or its source's
    /// format could not be resolved).
    package var inputs: [BusFormat?]
    /// Per output bus: the format the node produces (empty for output nodes).
    package var outputs: [BusFormat]
    /// For `genericOutput`: the client format the application or file receives; nil otherwise.
    package var clientFormat: BusFormat?

    /// Creates node formats.
    package init(inputs: [BusFormat?], outputs: [BusFormat], clientFormat: BusFormat? = nil) {
        self.inputs = inputs
        self.outputs = outputs
        self.clientFormat = clientFormat
    }
}

/// Every node's bus formats after the engine's propagation (for `audiograph inspect`). Package
/// access: applications see formats as `AudioFormat`.
///
/// Thread safety: a value type; safe to share between threads.
package struct ResolvedFormats: Sendable, Hashable {
    /// By node id. A node whose formats could not be resolved (an unreadable file upstream) is absent.
    package var nodes: [String: NodeFormats]

    /// Creates resolved formats.
    package init(nodes: [String: NodeFormats] = [:]) { self.nodes = nodes }

    /// The formats of node `id`.
    package subscript(id: String) -> NodeFormats? { nodes[id] }
}
