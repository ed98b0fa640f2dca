// The stock node types a graph file may name, and what kind of node each is.
import AudioGraphCore

/// A node type of the graph format (`"type"` of a node object).
///
/// Thread safety: a value type; safe to share between threads.
public enum NodeType: String, Sendable, Hashable, CaseIterable {
    case oscillator, player, input, mixer, environment, eq, delay, recorder, converter, output, genericOutput, analyser
    case reverb, timePitch, varispeed, lv2
}

/// What role a node type plays in a graph.
public enum NodeKind: String, Sendable, Hashable {
    /// No input bus, one output bus (oscillator, player, input).
    case source
    /// Many input buses mixed into one output bus (mixer, environment).
    case mixer
    /// One input bus processed into one output bus of the same format (eq, delay, recorder, analyser, reverb, timePitch, varispeed, lv2).
    case effect
    /// One input bus converted to another format (converter).
    case converter
    /// One input bus and no output bus: the end of the graph (output, genericOutput).
    case output
}
