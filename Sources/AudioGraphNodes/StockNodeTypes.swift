// The node types this module defines as descriptors, registered with graph files in one call.
import AudioGraphCore

/// The stock node types of this module as ``NodeTypeDescriptor``s (each written beside its class;
/// AudioGraphPulse's `PulseNodeTypes` and AudioGraphPlugins' `PluginNodeTypes` list theirs).
/// ``register()`` makes graph files accept them; AudioGraphOffline's loader calls it.
///
/// Thread safety: any control thread.
package enum StockNodeTypes {
    /// The types, in the graph format's order: each name with the function that makes its descriptor
    /// (``NodeTypeRegistry/register(named:_:)``: made when a graph first names it).
    package static let types: [(name: String, make: @Sendable () -> NodeTypeDescriptor)] = [
        ("oscillator", { OscillatorNode.descriptor }),
        ("mixer", { MixerNode.descriptor }),
        ("converter", { ConverterNode.descriptor }),
        ("delay", { DelayNode.descriptor }),
        ("analyser", { AnalyserNode.descriptor }),
        ("reverb", { ReverbNode.descriptor }),
        ("timePitch", { TimePitchNode.descriptor }),
        ("varispeed", { VarispeedNode.descriptor }),
        ("player", { PlayerNode.descriptor }),
        ("environment", { EnvironmentNode.descriptor }),
        ("eq", { EQNode.descriptor }),
        ("recorder", { RecorderNode.descriptor }),
        ("genericOutput", { GenericOutputNode.descriptor }),
        ("sampler", { SamplerNode.descriptor }),
        ("compressor", { DynamicsCompressorNode.descriptor }),
        ("convolver", { ConvolverNode.descriptor }),
        ("waveShaper", { WaveShaperNode.descriptor }),
        ("limiter", { PeakLimiterNode.descriptor }),
        ("dynamicsProcessor", { DynamicsProcessorNode.descriptor }),
        ("gain", { GainNode.descriptor }),
        ("stereoPanner", { StereoPannerNode.descriptor }),
        ("constantSource", { ConstantSourceNode.descriptor }),
        ("iirFilter", { IIRFilterNode.descriptor }),
        ("channelSplitter", { ChannelSplitterNode.descriptor }),
        ("channelMerger", { ChannelMergerNode.descriptor }),
        ("bufferSource", { BufferSourceNode.descriptor }),
        ("distortion", { DistortionNode.descriptor }),
        ("matrixMixer", { MatrixMixerNode.descriptor }),
    ]


    /// Registers every type with ``NodeTypeRegistry`` (idempotent; no descriptor is made here).
    package static func register() {
        NodeTypeRegistry.register(named: types)
    }
}
