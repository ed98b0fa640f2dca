// A connection from one node's output bus to another node's input bus (or, with `parameter`, to one of its parameters).
import AudioGraphCore

/// `{ "from": "osc", "to": "mix:1" }`, or audio into a parameter:
/// `{ "from": "lfo", "to": "amp", "parameter": "gain" }`.
///
/// Thread safety: a value type; safe to share between threads.
package struct ConnectionDescription: Sendable, Hashable, CustomStringConvertible {
    /// The source node's output bus.
    package var from: BusReference
    /// The destination node's input bus (with ``parameter``: the destination node, bus 0).
    package var to: BusReference
    /// The parameter of `to.node` the audio feeds (``ParameterConnection``), or nil for a
    /// connection into an input bus.
    package var parameter: ParameterAddress?

    /// Creates a connection.
    package init(from: BusReference, to: BusReference, parameter: ParameterAddress? = nil) {
        self.from = from
        self.to = to
        self.parameter = parameter
    }

    /// `osc -> mix:1`, `lfo -> amp.gain`.
    package var description: String { parameter.map { "\(from) -> \(to.node).\($0)" } ?? "\(from) -> \(to)" }
}
