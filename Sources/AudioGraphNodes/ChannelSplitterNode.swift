// Web Audio's ChannelSplitterNode: each channel of the input on its own mono output bus.

/// A channel splitter (Web Audio's `ChannelSplitterNode`): output bus `k` (mono) carries channel
/// `k` of the input, sample for sample; an output beyond the input's channels is silent (the
/// spec's `explicit`/`discrete` input of `numberOfOutputs` channels). The number of outputs is
/// the `outputs` property (1...32, default 6, as Web Audio's `numberOfOutputs`).
///
/// Thread safety: configure on a control thread.
public final class ChannelSplitterNode: GraphNode, @unchecked Sendable {
    /// `properties` of a `channelSplitter` node.
    public struct Options: Hashable, Sendable {
        /// Output buses, 1...32 (6).
        public var outputs: Int
        public init(outputs: Int = 6) { self.outputs = outputs }
    }

    /// The most buses Web Audio allows (32).
    public static let maximumBusCount = 32

    /// A splitter with `outputs` mono output buses (1...32).
    public init(id: String, outputs: Int = 6) throws(AudioGraphError) {
        guard (1...Self.maximumBusCount).contains(outputs) else {
            throw .invalidProperty(node: id, name: "outputs", reason: "expected 1...\(Self.maximumBusCount), found \(outputs)")
        }
        super.init(id: id, typeName: "channelSplitter", inputBusCount: 1, outputBusCount: outputs, parameters: [])
    }

    /// The `channelSplitter` node type: one input, property `outputs`; connections name the
    /// output bus (`"split:1"`). The file's bus check allows 32; the node's own count is checked
    /// with the engine's rules.
    package static let descriptor = NodeTypeDescriptor(
        name: "channelSplitter", kind: .effect, inputBuses: .fixed(1), outputBusCount: maximumBusCount,
        propertyKeys: ["outputs"],
        decode: { reader in
            var o = Options()
            if let n = reader.integer("outputs", in: 1...maximumBusCount) { o.outputs = n }
            return o
        },
        makeNode: { context throws(AudioGraphError) -> GraphNode in try ChannelSplitterNode(id: context.id, outputs: context.options(as: Options.self)?.outputs ?? 6) })

    /// Every output is mono at the input's rate.
    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        let rate = processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        return Array(repeating: .canonical(sampleRate: rate, channelCount: 1), count: outputBusCount)
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        ChannelSplitterKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``ChannelSplitterNode``.
final class ChannelSplitterKernel: NodeKernel, @unchecked Sendable {
    init(node: ChannelSplitterNode, maximumFramesPerSlice: Int) {
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let input = inputs.pull(0)
        for k in 0..<outputs.count {
            let silent = input == nil || input!.isSilent || k >= input!.channelCount
            InputBuffer.copyChannel(k, of: input, to: outputs[k].channel(0), count: n)
            outputIsSilent[k] = silent
        }
    }
}
