// A source whose samples come from an application closure (AU render-callback style).

/// A source node that asks an application closure for its samples, like an Audio Unit render
/// callback: the closure fills `frameCount` frames of each channel and returns whether it wrote
/// silence.
///
/// The closure runs on the render thread: it must follow the real-time rules (no allocation,
/// locks, I/O or waiting).
///
/// Thread safety: configure on a control thread; the closure is called on the render thread only.
public final class RenderCallbackNode: GraphNode, @unchecked Sendable {
    /// Fills `buffer` for the slice described by `context`; returns true when it wrote silence.
    public typealias Callback = @Sendable (_ context: RenderContext, _ buffer: ChannelBufferList) -> Bool

    let callback: Callback
    private let channels: Int
    private let rate: Double?

    /// - Parameters:
    ///   - channels: output channel count.
    ///   - sampleRate: output rate (nil: the graph's).
    public init(id: String, channels: Int, sampleRate: Double? = nil, callback: @escaping Callback) {
        self.callback = callback
        self.channels = channels
        self.rate = sampleRate
        super.init(id: id, typeName: "renderCallback", inputBusCount: 0, outputBusCount: 1, parameters: [],
                   declaredFormat: PartialStreamFormat(sampleRate: sampleRate, channelCount: channels))
    }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        [.canonical(sampleRate: rate ?? graphSampleRate, channelCount: channels)]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        RenderCallbackKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``RenderCallbackNode``.
final class RenderCallbackKernel: NodeKernel, @unchecked Sendable {
    /// The application's block may share state with other code: it runs on the render thread only.
    override var isSafeToRenderConcurrently: Bool { false }

    private let callback: RenderCallbackNode.Callback

    init(node: RenderCallbackNode, maximumFramesPerSlice: Int) {
        callback = node.callback
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: [])
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        outputIsSilent[0] = callback(context, outputs[0])
    }
}
