// A typed command for a graph playing live: set a parameter now, queue a connection change, apply the queue.
import AudioGraphDescription

/// One command for a ``LivePlayer`` (``LivePlayer/apply(_:)``). The `audiograph play` command line
/// parses its stdin text commands into these.
///
/// Thread safety: a value type; safe to share between threads.
public enum LiveCommand: Sendable, Hashable {
    /// Sets parameter `address` of node `node` to `value` at once, ramping linearly over
    /// `rampDuration` seconds (0: a step).
    case setParameter(node: String, address: String, value: Double, rampDuration: Double)
    /// Queues a connection from `source` to `destination`; it takes effect at the next ``update``.
    case connect(source: BusReference, destination: BusReference)
    /// Queues removing the connection into `destination`; it takes effect at the next ``update``.
    case disconnect(destination: BusReference)
    /// Applies the queued connection changes and waits until the render thread adopted them.
    case update
}
