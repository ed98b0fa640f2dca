// The node types this module defines as descriptors, registered with graph files in one call.
import AudioGraphCore

/// The stock node types of this module as ``NodeTypeDescriptor``s (each written beside its class;
/// AudioGraphPulse's `PulseNodeTypes` and AudioGraphPlugins' `PluginNodeTypes` list theirs).
/// ``register()`` makes graph files accept them; AudioGraphKit's loader calls it.
///
/// Thread safety: any control thread.
package enum StockNodeTypes {
    /// The descriptors, in the graph format's order.
    package static let descriptors: [NodeTypeDescriptor] = [
        OscillatorNode.descriptor, MixerNode.descriptor, ConverterNode.descriptor, DelayNode.descriptor, AnalyserNode.descriptor, ReverbNode.descriptor, TimePitchNode.descriptor, VarispeedNode.descriptor,
        PlayerNode.descriptor,
        EnvironmentNode.descriptor,
        EQNode.descriptor,
        RecorderNode.descriptor,
        GenericOutputNode.descriptor,
        SamplerNode.descriptor,
        DynamicsCompressorNode.descriptor,
        ConvolverNode.descriptor,
        WaveShaperNode.descriptor,
        PeakLimiterNode.descriptor,
        DynamicsProcessorNode.descriptor,
        GainNode.descriptor,
        StereoPannerNode.descriptor,
        ConstantSourceNode.descriptor,
        IIRFilterNode.descriptor,
        ChannelSplitterNode.descriptor,
        ChannelMergerNode.descriptor,
        BufferSourceNode.descriptor,
        DistortionNode.descriptor,
        MatrixMixerNode.descriptor,
    ]

    /// Registers every descriptor with ``NodeTypeRegistry`` (idempotent).
    package static func register() {
        for d in descriptors { NodeTypeRegistry.register(d) }
    }
}
