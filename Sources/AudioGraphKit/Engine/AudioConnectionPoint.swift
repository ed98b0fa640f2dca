// One end of a connection: a node and one of its buses (cf. AVAudioConnectionPoint).

/// A node and a bus: the destination of a connection (fan-out lists them) or its source.
///
/// Thread safety: immutable.
public final class AudioConnectionPoint: @unchecked Sendable, CustomStringConvertible {
    /// The node (nil when it was detached: Apple's points hold it weakly).
    public private(set) weak var node: AudioNode?
    /// The bus.
    public let bus: AudioNodeBus

    /// A point on `node`'s bus `bus`.
    public init(node: AudioNode, bus: AudioNodeBus) {
        self.node = node
        self.bus = bus
    }

    public var description: String { "\(node.map { $0.description } ?? "(detached)"):\(bus)" }
}

/// A connection of the engine's model (strong references: the engine owns attached nodes).
struct EngineConnection {
    let source: AudioNode
    let sourceBus: Int
    let destination: AudioNode
    let destinationBus: Int
}
