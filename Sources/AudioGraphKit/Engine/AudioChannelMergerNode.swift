// The engine API's channel merger (Web Audio's ChannelMergerNode surface; cf. AUMerger), a Linux addition.
import AudioGraphNodes
import Foundation

/// Merges its input buses, each down-mixed to mono, into one output of as many channels (Web
/// Audio's `ChannelMergerNode`; a Linux addition). Over the graph's `channelMerger` node.
///
/// Thread safety: the engine's.
public final class AudioChannelMergerNode: AudioNode, @unchecked Sendable {
    private let inputCount: Int

    /// A merger of `numberOfInputs` buses (1...32; out of range is a programmer error, as Web
    /// Audio throws).
    public init(numberOfInputs: Int = 6) {
        precondition((1...ChannelMergerNode.maximumBusCount).contains(numberOfInputs),
                     "AudioChannelMergerNode: numberOfInputs \(numberOfInputs) is outside 1...32")
        inputCount = numberOfInputs
        super.init(kindName: "channelMerger")
    }

    public override var numberOfInputs: Int { inputCount }

    /// `numberOfInputs` channels at the inputs' rate.
    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        AudioFormat(standardFormatWithSampleRate: (input ?? engineFormat).sampleRate, channels: AudioChannelCount(inputCount)) ?? engineFormat
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        try ChannelMergerNode(id: graphID, inputs: inputCount)
    }
}
