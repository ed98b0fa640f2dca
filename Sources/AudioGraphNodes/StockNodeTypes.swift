// The node types this module defines as descriptors, registered with graph files in one call.
import AudioGraphCore

/// The stock node types of this module as ``NodeTypeDescriptor``s (each written beside its class;
/// AudioGraphPulse's `PulseNodeTypes` and AudioGraphPlugins' `PluginNodeTypes` list theirs).
/// ``register()`` makes graph files accept them; AudioGraphKit's loader calls it.
///
/// Thread safety: any control thread.
public enum StockNodeTypes {
    /// The descriptors, in the graph format's order.
    public static let descriptors: [NodeTypeDescriptor] = [
        OscillatorNode.descriptor, MixerNode.descriptor, ConverterNode.descriptor, DelayNode.descriptor, AnalyserNode.descriptor, ReverbNode.descriptor, TimePitchNode.descriptor, VarispeedNode.descriptor,
        PlayerNode.descriptor,
        EnvironmentNode.descriptor,
        EQNode.descriptor,
        RecorderNode.descriptor,
        GenericOutputNode.descriptor,
        DistortionNode.descriptor,
    ]

    /// Registers every descriptor with ``NodeTypeRegistry`` (idempotent).
    public static func register() {
        for d in descriptors { NodeTypeRegistry.register(d) }
    }
}
