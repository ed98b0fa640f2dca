// Building a running engine graph from a validated graph description.
import AudioGraphNodes

/// A graph built from a description, initialized and ready to render.
public struct BuiltGraph: @unchecked Sendable {
    /// The engine graph (initialized).
    public let graph: AudioGraph
    /// What it was built from.
    public let validated: ValidatedGraph
    /// The graph's output node.
    public let outputNode: GraphNode
}

/// Turns graph descriptions into engine graphs, and their updates into pending-change lists.
///
/// Thread safety: control threads only.
public enum GraphBuilder {
    /// Creates every node, connects them and initializes the graph.
    ///
    /// - Parameters:
    ///   - maximumFramesPerSlice: overrides the description's (the CLI's `--slice`).
    ///   - outputs: what the output node becomes (offline: a generic output; live: PulseAudio).
    ///   - prepare: called with every node before the graph initializes (e.g. to give input
    ///     nodes their PulseAudio context).
    public static func build(_ validated: ValidatedGraph, maximumFramesPerSlice: Int? = nil,
                             outputs: OutputPlacement = .asDescribed,
                             prepare: ((GraphNode) -> Void)? = nil) throws(AudioGraphError) -> BuiltGraph {
        let graph: AudioGraph
        do {
            graph = try GraphAssembly.assemble(validated.description, maximumFramesPerSlice: maximumFramesPerSlice, outputs: outputs,
                                 prepare: prepare)
        } catch {
            throw error.error
        }
        try graph.initialize()
        guard let output = graph.outputNode else { throw .outputNodeCount(0) }
        return BuiltGraph(graph: graph, validated: validated, outputNode: output)
    }

    /// The pending-change list for one update's actions (nodes it adds are created here, off the
    /// render thread). See ``GraphAssembly/changes(for:sampleRate:outputs:)``.
    public static func changes(for update: UpdateDescription, sampleRate: Double,
                               outputs: OutputPlacement = .asDescribed) throws(AudioGraphError) -> [PendingChange] {
        try GraphAssembly.changes(for: update, sampleRate: sampleRate, outputs: outputs)
    }
}
