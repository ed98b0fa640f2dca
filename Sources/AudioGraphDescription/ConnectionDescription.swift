// A connection from one node's output bus to another node's input bus.
import AudioGraphCore

/// `{ "from": "osc", "to": "mix:1" }`.
///
/// Thread safety: a value type; safe to share between threads.
public struct ConnectionDescription: Sendable, Hashable, CustomStringConvertible {
    /// The source node's output bus.
    public var from: BusReference
    /// The destination node's input bus.
    public var to: BusReference

    /// Creates a connection.
    public init(from: BusReference, to: BusReference) {
        self.from = from
        self.to = to
    }

    /// `osc -> mix:1`.
    public var description: String { "\(from) -> \(to)" }
}
