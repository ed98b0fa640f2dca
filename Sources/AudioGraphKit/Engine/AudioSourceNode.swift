// A source whose samples come from the application's render block (cf. AVAudioSourceNode).
import AudioGraphNodes
import Foundation

/// A source node whose audio the application supplies from a render block, called on the
/// render thread for every slice (cf. AVAudioSourceNode). The block fills `outputData` (a
/// CoreAudio-style buffer list in the node's format) with `frameCount` frames, may set
/// `isSilence`, and returns `noErr`; any other status makes the slice silent (counted in
/// ``failedRenderCount``).
///
/// The block runs on the render thread: it must not allocate, lock, wait or do I/O. Keep its
/// state in memory the block captures (for example a class holding a phase, created before
/// `start()`), not in the objects of a control thread. Its `timestamp` carries the node's sample
/// time (frames since the node started) and the host time of the render.
///
/// Thread safety: the engine's for configuration; the block on the render thread only.
public final class AudioSourceNode: AudioNode, AudioMixing, @unchecked Sendable {
    /// The block (cf. AVAudioSourceNodeRenderBlock).
    public typealias RenderBlock = AudioSourceNodeRenderBlock

    /// The format the block renders in (nil: the format of the connection, else the engine's).
    let format: AudioFormat?
    let renderBlock: RenderBlock

    /// A source rendering in the format of its connection (the engine's by default).
    public init(renderBlock block: @escaping RenderBlock) {
        format = nil
        renderBlock = block
        super.init(kindName: "source")
    }

    /// A source rendering in `format` (the mixer it feeds converts rate and channels).
    public init(format: AudioFormat, renderBlock block: @escaping RenderBlock) {
        self.format = format
        renderBlock = block
        super.init(kindName: "source")
    }

    public override var numberOfInputs: Int { 0 }

    /// Slices the block failed (returned a status other than `noErr`) since the node was set up.
    public var failedRenderCount: Int { (graphNode as? SourceBlockGraphNode)?.unfilledSlices.load(ordering: .relaxed) ?? 0 }

    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        format ?? engineFormat
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let f = connectionFormats[0] ?? format ?? AudioFormat(streamFormat: engineFormat)
        guard f.commonFormat != .otherFormat else {
            throw .formatNotSupported(node: graphID, reason: "a source renders linear PCM, not \(f)")
        }
        return SourceBlockGraphNode(id: graphID, format: f, block: .render(renderBlock))
    }
}
