// The graph node behind AudioSourceNode: calls the application's block on the render thread.
import AudioGraphNodes
import Foundation
import Synchronization

/// A source ``GraphNode`` that asks an ``AudioSourceNode/RenderBlock`` for each slice, in the
/// block's format (converted to the graph's float channels after the call).
///
/// Thread safety: control side on control threads; the kernel on the render thread.
final class SourceBlockGraphNode: GraphNode, @unchecked Sendable {
    let format: AudioFormat
    let block: AudioSourceNode.RenderBlock
    /// Slices whose block returned an error (render thread writes, anyone reads).
    let failures = Atomic<Int>(0)

    init(id: String, format: AudioFormat, block: @escaping AudioSourceNode.RenderBlock) {
        self.format = format
        self.block = block
        super.init(id: id, typeName: "source", inputBusCount: 0, outputBusCount: 1, parameters: [],
                   declaredFormat: PartialStreamFormat(sampleRate: format.sampleRate, channelCount: Int(format.channelCount)))
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        guard let buffer = AudioPCMBuffer(pcmFormat: format, frameCapacity: AudioFrameCount(maximumFramesPerSlice)) else {
            throw .formatNotSupported(node: id, reason: "cannot make a buffer of \(format)")
        }
        return SourceBlockKernel(node: self, buffer: buffer, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``SourceBlockGraphNode``. Real-time safe: the buffer and time stamp are made
/// at creation; each slice sets the buffer's length, calls the block and converts.
final class SourceBlockKernel: NodeKernel, @unchecked Sendable {
    /// The application's block may share state with other code: it runs on the render thread only.
    override var isSafeToRenderConcurrently: Bool { false }

    private let block: AudioSourceNode.RenderBlock
    private let buffer: AudioPCMBuffer
    private let owner: SourceBlockGraphNode
    private let timestamp = UnsafeMutablePointer<AudioTimeStamp>.allocate(capacity: 1)
    private let isSilence = UnsafeMutablePointer<ObjCBool>.allocate(capacity: 1)

    init(node: SourceBlockGraphNode, buffer: AudioPCMBuffer, maximumFramesPerSlice: Int) {
        block = node.block
        self.buffer = buffer
        owner = node
        // Flags set once here: an option-set literal builds an array (it would allocate per slice).
        var stamp = AudioTimeStamp()
        stamp.mRateScalar = 1
        stamp.mFlags = [.sampleTimeValid, .hostTimeValid, .rateScalarValid]
        timestamp.initialize(to: stamp)
        isSilence.initialize(to: false)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        timestamp.deallocate()
        isSilence.deallocate()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        buffer.frameLength = AudioFrameCount(n)
        timestamp.pointee.mSampleTime = Double(context.sampleTime - startSampleTime)
        timestamp.pointee.mHostTime = AudioTime.currentHostTime
        isSilence.pointee = false
        let status = block(isSilence, UnsafePointer(timestamp), AudioFrameCount(n), buffer.mutableAudioBufferList)
        guard status == noErr else {
            owner.failures.wrappingAdd(1, ordering: .relaxed)
            outputSilence(frameCount: n)
            return
        }
        if isSilence.pointee.boolValue {
            outputSilence(frameCount: n)
            return
        }
        buffer.copyFrames(to: outputs[0], destinationFrame: 0, fromFrame: 0, frameCount: n)
        outputIsSilent[0] = false
    }
}
