// A sink that hands the application whatever reaches its input (cf. AVAudioSinkNode).
import AudioGraphNodes
import Foundation

/// A node that receives the audio connected to its input in a block, on the render thread, for
/// every slice (cf. AVAudioSinkNode): connect the input node to it to process live input with no
/// output connected. The engine renders it every slice even though nothing pulls it. The block
/// sees the audio as non-interleaved float channels; it must not allocate, lock, wait or do I/O
/// (hand the samples to another thread through a lock-free ring). A status other than `noErr`
/// is counted in ``failedReceiveCount``.
///
/// Thread safety: the engine's for configuration; the block on the render thread only.
public final class AudioSinkNode: AudioNode, @unchecked Sendable {
    /// The block (cf. AVAudioSinkNodeReceiverBlock).
    public typealias ReceiverBlock = AudioSinkNodeReceiverBlock

    let receiverBlock: ReceiverBlock

    /// A sink calling `block` with each slice of its input.
    public init(receiverBlock block: @escaping ReceiverBlock) {
        receiverBlock = block
        super.init(kindName: "sink")
    }

    public override var numberOfOutputs: Int { 0 }

    /// Slices the block failed (returned a status other than `noErr`).
    public var failedReceiveCount: Int { (graphNode as? SinkBlockGraphNode)?.failures.load(ordering: .relaxed) ?? 0 }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        SinkBlockGraphNode(id: graphID, block: receiverBlock)
    }
}
