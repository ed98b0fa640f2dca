// A connection from a node's output bus to another node's parameter (Web Audio's AudioNode.connect(AudioParam)).

/// An output bus feeding a parameter: every sample of the bus, down-mixed to mono, is added to
/// the parameter's own value (its automation, ramp or set value) per sample, as Web Audio adds
/// an AudioParam's inputs to its intrinsic value; the sum is clamped to the parameter's range.
/// The source renders before the node it modulates; a cycle through parameter connections is
/// refused like any cycle.
///
/// Thread safety: a value type; safe to share between threads.
public struct ParameterConnection: Hashable, Sendable, CustomStringConvertible {
    /// The modulating node and its output bus.
    public var source: String
    public var sourceBus: Int
    /// The modulated node and its parameter.
    public var destination: String
    public var parameter: ParameterAddress

    public init(source: String, sourceBus: Int = 0, destination: String, parameter: ParameterAddress) {
        self.source = source
        self.sourceBus = sourceBus
        self.destination = destination
        self.parameter = parameter
    }

    public var description: String { "\(source):\(sourceBus) -> \(destination).\(parameter)" }
}
