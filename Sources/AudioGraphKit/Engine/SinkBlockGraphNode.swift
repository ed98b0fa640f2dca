// The graph node behind AudioSinkNode: pulled every slice, hands its input to the application's block.
import AudioGraphNodes
import Foundation
import Synchronization

/// A sink ``GraphNode`` (one input, no output) rendered every slice; its kernel passes the
/// input to an ``AudioSinkNode/ReceiverBlock``.
///
/// Thread safety: control side on control threads; the kernel on the render thread.
final class SinkBlockGraphNode: GraphNode, @unchecked Sendable {
    let block: AudioSinkNode.ReceiverBlock
    /// Slices whose block returned an error.
    let failures = Atomic<Int>(0)

    init(id: String, block: @escaping AudioSinkNode.ReceiverBlock) {
        self.block = block
        super.init(id: id, typeName: "sink", inputBusCount: 1, outputBusCount: 0, parameters: [])
    }

    override var isPulledEverySlice: Bool { true }

    override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        []
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        SinkBlockKernel(node: self, channels: inputFormats.first??.channelCount ?? 0, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``SinkBlockGraphNode``. Real-time safe: the buffer list is made at creation
/// and pointed at the input's channels each slice.
final class SinkBlockKernel: NodeKernel, @unchecked Sendable {
    /// The application's block may share state with other code: it runs on the render thread only.
    override var isSafeToRenderConcurrently: Bool { false }

    private let block: AudioSinkNode.ReceiverBlock
    private let owner: SinkBlockGraphNode
    private let list: UnsafeMutableAudioBufferListPointer
    private let channels: Int
    private let timestamp = UnsafeMutablePointer<AudioTimeStamp>.allocate(capacity: 1)

    init(node: SinkBlockGraphNode, channels: Int, maximumFramesPerSlice: Int) {
        block = node.block
        owner = node
        self.channels = channels
        list = AudioBufferList.allocate(maximumBuffers: max(1, channels))
        // Flags set once here: an option-set literal builds an array (it would allocate per slice).
        var stamp = AudioTimeStamp()
        stamp.mFlags = [.sampleTimeValid, .hostTimeValid]
        timestamp.initialize(to: stamp)
        super.init(nodeID: node.id, outputFormats: [], maximumFramesPerSlice: maximumFramesPerSlice, parameters: [])
    }

    deinit {
        free(list.unsafeMutablePointer)
        timestamp.deallocate()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        guard channels > 0, let input = inputs.pull(0) else { return }
        let n = context.frameCount
        guard input.channelCount <= channels else { return }
        list.point(at: input.buffer, frameCount: n, maximumBuffers: channels)
        timestamp.pointee.mSampleTime = Double(context.sampleTime)
        timestamp.pointee.mHostTime = AudioTime.currentHostTime
        if block(UnsafePointer(timestamp), AudioFrameCount(n), list.unsafePointer) != noErr {
            owner.failures.wrappingAdd(1, ordering: .relaxed)
        }
    }
}
