// The graph node behind AudioSourceNode and a manual-rendering AudioInputNode: asks the application's block for each slice.
import AudioGraphNodes
import Foundation
import Synchronization

/// A source ``GraphNode`` that asks an application block for each slice, in the block's format:
/// a buffer of that format is made with the kernel, filled from the block and converted to the
/// graph's float channels. The two kinds of block differ only in how they fill it (``Block``):
///
/// - ``Block/render(_:)``, an ``AudioSourceNode/RenderBlock`` (``AudioSourceNode``, type
///   `source`): the block renders into the buffer; a status other than `noErr` makes the slice
///   silent and is counted in ``unfilledSlices``; `isSilence` set by the block makes it silent.
/// - ``Block/input(_:)``, an ``AudioIONodeInputBlock``
///   (`setManualRenderingInputPCMFormat(_:inputBlock:)`, type `input`): the block returns a
///   buffer list, copied into the buffer; nil makes the slice silent and is counted in
///   ``unfilledSlices``, and a list shorter than the slice gives silence for what is missing.
///
/// Thread safety: control side on control threads; the kernel on the render thread.
final class SourceBlockGraphNode: GraphNode, @unchecked Sendable {
    /// The application's block, by the way it hands a slice over.
    enum Block {
        /// Renders into the node's buffer list (AudioSourceNode).
        case render(AudioSourceNode.RenderBlock)
        /// Returns a buffer list to copy (the input node in manual rendering).
        case input(AudioIONodeInputBlock)

        /// The node type name the graph shows for it.
        var typeName: String {
            switch self {
            case .render: "source"
            case .input: "input"
            }
        }
    }

    let format: AudioFormat
    let block: Block
    /// Slices the block did not fill: a render block's status other than `noErr`, an input
    /// block's nil (render thread writes, anyone reads).
    let unfilledSlices = Atomic<Int>(0)

    init(id: String, format: AudioFormat, block: Block) {
        self.format = format
        self.block = block
        super.init(id: id, typeName: block.typeName, inputBusCount: 0, outputBusCount: 1, parameters: [],
                   declaredFormat: PartialStreamFormat(sampleRate: format.sampleRate, channelCount: Int(format.channelCount)))
    }

    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        guard let buffer = AudioPCMBuffer(pcmFormat: format, frameCapacity: AudioFrameCount(maximumFramesPerSlice)) else {
            throw .formatNotSupported(node: id, reason: "cannot make a buffer of \(format)")
        }
        return SourceBlockKernel(node: self, buffer: buffer, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``SourceBlockGraphNode``. Real-time safe: the buffer, the time stamp and the
/// silence flag are made at creation; each slice sets the buffer's length, has the block fill it
/// (a render block's call, or a byte copy of an input block's list) and converts.
final class SourceBlockKernel: NodeKernel, @unchecked Sendable {
    /// The application's block may share state with other code: it runs on the render thread only.
    override var isSafeToRenderConcurrently: Bool { false }

    /// What a block made of one slice.
    private enum Slice {
        /// The buffer holds the slice.
        case filled
        /// The block said the slice is silence.
        case silent
        /// The block failed or had nothing (counted).
        case unfilled
    }

    private let block: SourceBlockGraphNode.Block
    private let buffer: AudioPCMBuffer
    private let owner: SourceBlockGraphNode
    private let bytesPerFrame: Int
    /// A render block's arguments.
    private let timestamp = UnsafeMutablePointer<AudioTimeStamp>.allocate(capacity: 1)
    private let isSilence = UnsafeMutablePointer<ObjCBool>.allocate(capacity: 1)

    init(node: SourceBlockGraphNode, buffer: AudioPCMBuffer, maximumFramesPerSlice: Int) {
        block = node.block
        self.buffer = buffer
        owner = node
        bytesPerFrame = node.format.bytesPerFrame
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
        let slice: Slice
        switch block {
        case .render(let renderBlock): slice = render(renderBlock, frameCount: n, sampleTime: context.sampleTime)
        case .input(let inputBlock): slice = copy(inputBlock, frameCount: n)
        }
        switch slice {
        case .unfilled:
            owner.unfilledSlices.wrappingAdd(1, ordering: .relaxed)
            outputSilence(frameCount: n)
        case .silent:
            outputSilence(frameCount: n)
        case .filled:
            buffer.copyFrames(to: outputs[0], destinationFrame: 0, fromFrame: 0, frameCount: n)
            outputIsSilent[0] = false
        }
    }

    /// Has a render block render the slice into the buffer.
    private func render(_ renderBlock: AudioSourceNode.RenderBlock, frameCount n: Int, sampleTime: Int64) -> Slice {
        timestamp.pointee.mSampleTime = Double(sampleTime - startSampleTime)
        timestamp.pointee.mHostTime = AudioTime.currentHostTime
        isSilence.pointee = false
        guard renderBlock(isSilence, UnsafePointer(timestamp), AudioFrameCount(n), buffer.mutableAudioBufferList) == noErr else {
            return .unfilled
        }
        return isSilence.pointee.boolValue ? .silent : .filled
    }

    /// Copies what an input block returns into the buffer, zeros where its list is short.
    private func copy(_ inputBlock: AudioIONodeInputBlock, frameCount n: Int) -> Slice {
        guard let supplied = inputBlock(AudioFrameCount(n)) else { return .unfilled }
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
        return .filled
    }
}
