// The graph node behind the input node in manual rendering with an input block: asks the application's block for each slice.
import AudioGraphNodes
import Foundation
import Synchronization

/// A source ``GraphNode`` that takes each slice from an ``AudioIONodeInputBlock``
/// (`setManualRenderingInputPCMFormat(_:inputBlock:)`): the block's buffer list, in the format
/// given with it, is copied into a buffer of that format and converted to the graph's float
/// channels. A nil list, or a buffer shorter than the slice, gives silence for what is missing.
///
/// Thread safety: control side on control threads; the kernel on the render thread.
final class InputBlockGraphNode: GraphNode, @unchecked Sendable {
    let format: AudioFormat
    let block: AudioIONodeInputBlock
    /// Slices for which the block returned nil (render thread writes, anyone reads).
    let emptySlices = Atomic<Int>(0)

    init(id: String, format: AudioFormat, block: @escaping AudioIONodeInputBlock) {
        self.format = format
        self.block = block
        super.init(id: id, typeName: "input", inputBusCount: 0, outputBusCount: 1, parameters: [],
                   declaredFormat: PartialStreamFormat(sampleRate: format.sampleRate, channelCount: Int(format.channelCount)))
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        guard let buffer = AudioPCMBuffer(pcmFormat: format, frameCapacity: AudioFrameCount(maximumFramesPerSlice)) else {
            throw .formatNotSupported(node: id, reason: "cannot make a buffer of \(format)")
        }
        return InputBlockKernel(node: self, buffer: buffer, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``InputBlockGraphNode``. Real-time safe: copies bytes into a buffer made at
/// creation and converts it.
final class InputBlockKernel: NodeKernel, @unchecked Sendable {
    /// The application's block may share state with other code: it runs on the render thread only.
    override var isSafeToRenderConcurrently: Bool { false }

    private let block: AudioIONodeInputBlock
    private let buffer: AudioPCMBuffer
    private let owner: InputBlockGraphNode
    private let bytesPerFrame: Int

    init(node: InputBlockGraphNode, buffer: AudioPCMBuffer, maximumFramesPerSlice: Int) {
        block = node.block
        self.buffer = buffer
        owner = node
        bytesPerFrame = node.format.bytesPerFrame
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        guard let supplied = block(AudioFrameCount(n)) else {
            owner.emptySlices.wrappingAdd(1, ordering: .relaxed)
            outputSilence(frameCount: n)
            return
        }
        buffer.frameLength = AudioFrameCount(n)
        let source = UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: supplied))
        let destination = UnsafeMutableAudioBufferListPointer(buffer.mutableAudioBufferList)
        let wanted = n * bytesPerFrame
        for b in 0..<destination.count {
            guard let to = destination[b].mData else { continue }
            var copied = 0
            if b < source.count, let from = source[b].mData {
                copied = min(wanted, Int(source[b].mDataByteSize))
                to.copyMemory(from: from, byteCount: copied)
            }
            if copied < wanted { (to + copied).initializeMemory(as: UInt8.self, repeating: 0, count: wanted - copied) }
        }
        buffer.copyFrames(to: outputs[0], destinationFrame: 0, fromFrame: 0, frameCount: n)
        outputIsSilent[0] = false
    }
}
