// Web Audio's StereoPannerNode: equal-power panning of a mono or stereo input to stereo.

/// An equal-power stereo panner (Web Audio's `StereoPannerNode`,
/// https://www.w3.org/TR/webaudio/#stereopanner-algorithm): the output is always stereo.
/// A mono input at pan `p` gives `L = x·cos(θ)`, `R = x·sin(θ)`, `θ = (p+1)/2 · π/2`; a stereo
/// input at `p ≤ 0` gives `L = xL + xR·cos(θ)`, `R = xR·sin(θ)` with `θ = (p+1)·π/2`, and at
/// `p > 0` `L = xL·cos(θ)`, `R = xR + xL·sin(θ)` with `θ = p·π/2` (``ChannelMixing``'s
/// `panMono`/`panStereo`). An input of more than two channels is first down-mixed to stereo
/// (the spec's `clamped-max` with `speakers`: quad and 5.1 by the up/down-mix rules, other
/// counts discretely: the first two channels).
///
/// Parameters: `pan` (-1...1, 0), a-rate.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class StereoPannerNode: GraphNode, @unchecked Sendable {
    public init(id: String, sampleRate: Double) {
        super.init(id: id, typeName: "stereoPanner", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.stereoPanner.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    /// The `stereoPanner` node type: one input, one stereo output, ``ParameterTable/stereoPanner``.
    package static let descriptor = NodeTypeDescriptor(
        name: "stereoPanner", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, parameters: .stereoPanner
    ) { context in StereoPannerNode(id: context.id, sampleRate: context.sampleRate) }

    /// Stereo at the input's rate (or the declared one).
    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        let rate = processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        if let declared = declaredFormat.channelCount, declared != 2 {
            throw .formatNotSupported(node: id, reason: "a stereo panner's output is stereo (2 channels), not \(declared)")
        }
        return [.canonical(sampleRate: rate, channelCount: 2)]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        StereoPannerKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

extension ParameterTable {
    /// ``StereoPannerNode``'s parameters: `pan` -1...1 (0).
    package static let stereoPanner = ParameterTable([.init(.global, "pan", .pan, -1, 1, 0)])
}

/// Render side of ``StereoPannerNode``.
final class StereoPannerKernel: NodeKernel, @unchecked Sendable {
    private let panIndex: Int
    // MARK: Render thread only (sized at init: the down-mix of a wider input)
    private let inputTable: UnsafeMutablePointer<UnsafePointer<Float>>
    private let inputTableCapacity: Int
    private let downmix: ChannelBufferStorage
    private let downmixTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(node: StereoPannerNode, maximumFramesPerSlice: Int) {
        panIndex = node.parameterIndex(of: ParameterAddress(name: "pan"))!
        inputTableCapacity = max(2, node.inputFormats.first??.channelCount ?? 2)
        inputTable = .allocate(capacity: inputTableCapacity)
        downmix = ChannelBufferStorage(channelCount: 2, capacity: maximumFramesPerSlice)
        downmixTable = .allocate(capacity: 2)
        downmixTable[0] = downmix.list.channel(0)
        downmixTable[1] = downmix.list.channel(1)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        inputTable.deallocate()
        downmixTable.deallocate()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let pan = parameterValues(panIndex, context)
        guard let input = inputs.pull(0), !input.isSilent, input.channelCount > 0 else {
            outputSilence(frameCount: n)
            return
        }
        let panValues: ChannelMixing.Values
        if let v = pan.values { panValues = .perSample(UnsafePointer(v)) } else { panValues = .constant(pan.constant) }
        let l = out.channel(0), r = out.channel(1)
        switch input.channelCount {
        case 1:
            ChannelMixing.panMono(input: input.buffer.channel(0), left: l, right: r, frameCount: n, pan: panValues)
        case 2:
            ChannelMixing.panStereo(left: input.buffer.channel(0), right: input.buffer.channel(1), outLeft: l, outRight: r,
                                    frameCount: n, pan: panValues)
        default:
            let count = min(input.channelCount, inputTableCapacity)
            for c in 0..<count { inputTable[c] = UnsafePointer(input.buffer.channel(c)) }
            ChannelMixing.mix(input: UnsafeBufferPointer(start: inputTable, count: count),
                              output: UnsafeBufferPointer(start: downmixTable, count: 2), frameCount: n)
            ChannelMixing.panStereo(left: downmixTable[0], right: downmixTable[1], outLeft: l, outRight: r,
                                    frameCount: n, pan: panValues)
        }
        outputIsSilent[0] = false
    }
}
