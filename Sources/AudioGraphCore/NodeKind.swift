// What role a node type plays in a graph: source, mixer, effect, converter or output.

/// What role a node type plays in a graph.
package enum NodeKind: String, Sendable, Hashable {
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
