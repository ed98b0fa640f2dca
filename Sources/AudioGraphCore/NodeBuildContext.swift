// What a node type's factory is given: the node's id, rate, input buses, decoded options and where it renders.

/// The arguments of ``NodeTypeDescriptor/makeNode``.
///
/// Thread safety: a value type; safe to share between threads.
package struct NodeBuildContext: Sendable {
    /// The node's id in the graph.
    package var id: String
    /// The graph's sample rate.
    package var sampleRate: Double
    /// The input bus count the file chose (the type's default when it may not choose).
    package var inputBusCount: Int
    /// The decoded `properties` (the type's own options value).
    package var options: any NodeOptions
    /// True when the graph renders offline (`audiograph render`): nodes that hand data to a
    /// thread may hand it to the renderer instead.
    package var rendersOffline: Bool
    /// Where the graph's output goes (output nodes build what it says; see ``OutputPlacement``).
    package var placement: OutputPlacement

    /// A context; `placement` defaults to ``OutputPlacement/offline`` when `rendersOffline`,
    /// else ``OutputPlacement/asDescribed``.
    package init(id: String, sampleRate: Double, inputBusCount: Int, options: any NodeOptions, rendersOffline: Bool,
                placement: OutputPlacement? = nil) {
        self.id = id
        self.sampleRate = sampleRate
        self.inputBusCount = inputBusCount
        self.options = options
        self.rendersOffline = rendersOffline
        self.placement = placement ?? (rendersOffline ? .offline : .asDescribed)
    }

    /// The options as the type's own value (a descriptor's factory knows which it decoded).
    package func options<T: NodeOptions>(as type: T.Type) -> T? { options as? T }

    /// Builds the node as the registered type `typeName` with that type's default options (an
    /// output placed elsewhere than described: an `output` rendered offline becomes a generic
    /// output, a `genericOutput` played live a PulseAudio output).
    /// - Throws: ``AudioGraphError/invalidProperty(node:name:reason:)`` when no such type is registered.
    package func handOver(to typeName: String) throws(AudioGraphError) -> GraphNode {
        guard let descriptor = NodeTypeRegistry.descriptor(named: typeName) else {
            throw .invalidProperty(node: id, name: "type", reason: "no node type \"\(typeName)\" is registered for this placement")
        }
        var context = self
        context.options = NoNodeOptions()
        return try descriptor.makeNode(context)
    }
}
