// Structural and parameter changes queued while a graph is initialized, applied by update().
import AudioGraphRealtime
import Synchronization

/// One queued change (cf. AUGraph's pending changes). A list of them is applied by
/// `AudioGraph.update()` all together or not at all.
public enum PendingChange: @unchecked Sendable {
    /// Adds a node (not yet initialized; update() sets it up off the render thread).
    case addNode(GraphNode)
    /// Removes a node and every connection to or from it.
    case removeNode(String)
    /// Connects an output bus to an input bus.
    case connect(source: String, sourceBus: Int, destination: String, destinationBus: Int)
    /// Removes the connection into an input bus.
    case disconnect(destination: String, destinationBus: Int)
    /// Connects an output bus to a parameter (Web Audio's `AudioNode.connect(AudioParam)`): its
    /// samples, down-mixed to mono, are added to the parameter's value per sample.
    case connectParameter(source: String, sourceBus: Int, destination: String, parameter: ParameterAddress)
    /// Removes that connection.
    case disconnectParameter(source: String, sourceBus: Int, destination: String, parameter: ParameterAddress)
    /// Sets a parameter, sample-exactly with the rest of the list, ramping over `rampDuration` s.
    /// The address is structured (parsed once, where the text was: a graph file's reader, or a
    /// string literal); the graph finds the parameter by it in the node's index, not by name.
    case setParameter(node: String, address: ParameterAddress, value: Double, rampDuration: Double)
    /// Sets a property (validated by the node; delivered to its kernel with the list).
    case setProperty(node: String, name: String, value: any Sendable)
}

/// A thread-safe queue of ``PendingChange``s.
///
/// Thread safety: any control thread may append; `update()` takes the whole list. The render
/// thread never touches it (a mutex is fine here).
public final class PendingChangeList: Sendable {
    private let changes = ControlLock<[PendingChange]>([])

    public init() {}

    /// Appends changes (all of them, atomically with respect to `take`).
    public func append(contentsOf list: [PendingChange]) {
        changes.withLock { $0.append(contentsOf: list) }
    }

    /// Removes and returns everything queued.
    public func take() -> [PendingChange] {
        changes.withLock { c in defer { c.removeAll() }; return c }
    }

    /// Number of queued changes.
    public var count: Int { changes.withLock { $0.count } }
}
