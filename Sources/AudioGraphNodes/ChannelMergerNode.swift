// Web Audio's ChannelMergerNode: each input bus, down-mixed to mono, as one channel of the output.

/// A channel merger (Web Audio's `ChannelMergerNode`): input bus `k` is down-mixed to mono (the
/// spec's `explicit` channel count 1 with `speakers`: stereo `(L+R)/2`, quad `(L+R+SL+SR)/4`,
/// 5.1 `√½(L+R) + C + ½(SL+SR)`, other counts their first channel) and becomes channel `k` of
/// the output; an input with nothing connected (or silent) gives a silent channel. The output has
/// as many channels as the node has inputs (`inputBusCount`, 1...32, default 6, as Web Audio's
/// `numberOfInputs`).
///
/// Thread safety: configure on a control thread.
public final class ChannelMergerNode: GraphNode, @unchecked Sendable {
    /// The most buses Web Audio allows (32).
    public static let maximumBusCount = 32

    /// A merger with `inputs` input buses (1...32).
    public init(id: String, inputs: Int = 6) throws(AudioGraphError) {
        guard (1...Self.maximumBusCount).contains(inputs) else {
            throw .invalidProperty(node: id, name: "inputBusCount", reason: "expected 1...\(Self.maximumBusCount), found \(inputs)")
        }
        super.init(id: id, typeName: "channelMerger", inputBusCount: inputs, outputBusCount: 1, parameters: [])
    }

    /// The `channelMerger` node type: `inputBusCount` 1...32 (6), one output of that many channels.
    package static let descriptor = NodeTypeDescriptor(
        name: "channelMerger", kind: .mixer,
        inputBuses: BusCountRule(defaultCount: 6, minimum: 1, maximum: maximumBusCount), outputBusCount: 1
    ) { context throws(AudioGraphError) -> GraphNode in try ChannelMergerNode(id: context.id, inputs: context.inputBusCount) }

    /// One channel per input bus, at the inputs' rate (they must agree: the merger does not convert).
    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        let rate = processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        return [.canonical(sampleRate: rate, channelCount: inputBusCount)]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        ChannelMergerKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``ChannelMergerNode``.
final class ChannelMergerKernel: NodeKernel, @unchecked Sendable {
    // MARK: Render thread only (sized at init)
    private let inputTable: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let tableCapacity: Int

    init(node: ChannelMergerNode, maximumFramesPerSlice: Int) {
        tableCapacity = max(1, node.inputFormats.compactMap { $0?.channelCount }.max() ?? 1)
        inputTable = .allocate(capacity: tableCapacity)
        outputTable = .allocate(capacity: 1)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        inputTable.deallocate()
        outputTable.deallocate()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        var silent = true
        for k in 0..<min(inputs.count, out.channelCount) {
            let y = out.channel(k)
            guard let input = inputs.pull(k), !input.isSilent, input.channelCount > 0 else {
                y.update(repeating: 0, count: n)
                continue
            }
            silent = false
            let count = input.channelCount
            if count == 1 {
                y.update(from: input.buffer.channel(0), count: n)
            } else if ChannelMixing.hasSpeakersLayout(count) && count <= tableCapacity {
                for c in 0..<count { inputTable[c] = UnsafePointer(input.buffer.channel(c)) }
                outputTable[0] = y
                ChannelMixing.mix(input: UnsafeBufferPointer(start: inputTable, count: count),
                                  output: UnsafeBufferPointer(start: outputTable, count: 1), frameCount: n)
            } else {
                y.update(from: input.buffer.channel(0), count: n)   // discrete: the first channel
            }
        }
        outputIsSilent[0] = silent
    }
}
