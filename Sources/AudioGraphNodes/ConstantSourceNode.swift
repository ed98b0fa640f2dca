// Web Audio's ConstantSourceNode: a source whose every sample is its a-rate `offset` parameter.

/// A constant source (Web Audio's `ConstantSourceNode`): every sample of every channel is
/// `offset[n]` (a-rate: automation and ramps as every parameter) from `startTime` until
/// `stopTime` (seconds on the graph timeline, counted from the frame the node was added),
/// silence outside. With automation it is a control signal for other parameters.
///
/// Parameters: `offset` (±3.4028235e38, 1). Properties: ``Options``.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class ConstantSourceNode: GraphNode, @unchecked Sendable {
    /// `properties` of a `constantSource` node.
    public struct Options: Hashable, Sendable {
        /// Output channels (1), each the same samples.
        public var channels: Int
        /// Where it starts, seconds (0).
        public var startTime: Double
        /// Where it stops, seconds (nil: never).
        public var stopTime: Double?
        public init(channels: Int = 1, startTime: Double = 0, stopTime: Double? = nil) {
            self.channels = channels
            self.startTime = startTime
            self.stopTime = stopTime
        }
    }

    /// The node's options.
    public let options: Options

    public init(id: String, sampleRate: Double, options: Options = Options()) {
        self.options = options
        super.init(id: id, typeName: "constantSource", inputBusCount: 0, outputBusCount: 1,
                   parameters: ParameterTable.constantSource.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0),
                   declaredFormat: PartialStreamFormat(sampleRate: sampleRate, channelCount: options.channels))
    }

    /// The `constantSource` node type: a source, properties `channels`, `startTime`, `stopTime`,
    /// ``ParameterTable/constantSource``.
    package static let descriptor = NodeTypeDescriptor(
        name: "constantSource", kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["channels", "startTime", "stopTime"], parameters: .constantSource,
        decode: { reader in
            var o = Options()
            if let channels = reader.integer("channels", in: 1...FormatDescription.maximumChannelCount) { o.channels = channels }
            if let time = reader.time("startTime") { o.startTime = time }
            if let time = reader.time("stopTime") {
                if time <= o.startTime {
                    reader.reportInvalid("stopTime", "stopTime \(ParameterInfo.format(time)) must be after startTime \(ParameterInfo.format(o.startTime))")
                } else {
                    o.stopTime = time
                }
            }
            return o
        },
        makeNode: { context in
            ConstantSourceNode(id: context.id, sampleRate: context.sampleRate, options: context.options(as: Options.self) ?? Options())
        })

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        [.canonical(sampleRate: declaredFormat.sampleRate ?? graphSampleRate, channelCount: declaredFormat.channelCount ?? options.channels)]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        ConstantSourceKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

extension ParameterTable {
    /// ``ConstantSourceNode``'s parameters: `offset` (the finite single floats; default 1).
    package static let constantSource = ParameterTable([
        .init(.global, "offset", .generic, -Double(Float.greatestFiniteMagnitude), Double(Float.greatestFiniteMagnitude), 1),
    ])
}

/// Render side of ``ConstantSourceNode``.
final class ConstantSourceKernel: NodeKernel, @unchecked Sendable {
    private let offsetIndex: Int
    private let startOffset: Int64
    private let stopOffset: Int64

    init(node: ConstantSourceNode, maximumFramesPerSlice: Int) {
        offsetIndex = node.parameterIndex(of: ParameterAddress(name: "offset"))!
        let rate = node.outputFormats[0].sampleRate
        startOffset = FrameCount.frames(seconds: node.options.startTime, sampleRate: rate)
        stopOffset = node.options.stopTime.map { FrameCount.frames(seconds: $0, sampleRate: rate) } ?? .max
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let offset = parameterValues(offsetIndex, context)
        let out = outputs[0]
        let begin = startSampleTime &+ startOffset
        let end = stopOffset == .max ? Int64.max : startSampleTime &+ stopOffset
        let t0 = context.sampleTime
        if t0 + Int64(n) <= begin || t0 >= end {
            outputSilence(frameCount: n)
            return
        }
        let first = out.channel(0)
        for i in 0..<n {
            let t = t0 + Int64(i)
            first[i] = t < begin || t >= end ? 0 : offset[i]
        }
        for c in 1..<max(1, out.channelCount) { out.channel(c).update(from: first, count: n) }
        outputIsSilent[0] = false
    }
}
