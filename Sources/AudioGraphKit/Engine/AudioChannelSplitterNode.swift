// The engine API's channel splitter (Web Audio's ChannelSplitterNode surface; cf. AUSplitter), a Linux addition.
import AudioGraphNodes
import Foundation

/// Splits its input into mono output buses, channel `k` on bus `k` (Web Audio's
/// `ChannelSplitterNode`; a Linux addition). Over the graph's `channelSplitter` node.
///
/// Thread safety: the engine's.
public final class AudioChannelSplitterNode: AudioNode, @unchecked Sendable {
    private let outputCount: Int

    /// A splitter of `numberOfOutputs` buses (1...32; out of range is a programmer error, as
    /// Web Audio throws).
    public init(numberOfOutputs: Int = 6) {
        precondition((1...ChannelSplitterNode.maximumBusCount).contains(numberOfOutputs),
                     "AudioChannelSplitterNode: numberOfOutputs \(numberOfOutputs) is outside 1...32")
        outputCount = numberOfOutputs
        super.init(kindName: "channelSplitter")
    }

    public override var numberOfOutputs: Int { outputCount }

    /// Every output is mono at the input's rate.
    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        AudioFormat(standardFormatWithSampleRate: (input ?? engineFormat).sampleRate, channels: 1) ?? engineFormat
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        try ChannelSplitterNode(id: graphID, outputs: outputCount)
    }
}
