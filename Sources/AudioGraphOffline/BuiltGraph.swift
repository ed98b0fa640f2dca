// A graph built from a graph file: the initialized engine graph, what it came from, its output node.
import AudioGraphNodes

/// A graph built from a description by ``GraphLoader/build(_:maximumFramesPerSlice:outputs:prepare:)``,
/// initialized and ready to render.
///
/// Thread safety: a value; the graph it holds follows ``AudioGraph``'s rules.
public struct BuiltGraph: @unchecked Sendable {
    /// The engine graph (initialized).
    public let graph: AudioGraph
    /// What it was built from.
    public let validated: ValidatedGraph
    /// The graph's output node.
    public let outputNode: GraphNode
}
