// The mixer: N inputs panned, scaled and summed into one output (cf. AUMultiChannelMixer).

/// Mixes `inputBusCount` inputs into one output bus of `channels` channels (default 2).
///
/// Stereo output: each input is brought to mono or stereo (more channels are down-mixed by the
/// Web Audio "speakers" rules), panned exactly as the Web Audio StereoPannerNode (a mono input at
/// pan 0 gives 0.70710678 on each side; a stereo input at pan 0 passes unchanged), scaled by its
/// volume, summed, and scaled by the output volume. Other output channel counts: each input is
/// up/down-mixed to the output layout ("speakers" for 1/2/4/6 channels, "discrete" otherwise)
/// and pan is ignored. Inputs at another sample rate are converted to the mixer's rate
/// (libsamplerate, best quality); any channel count is accepted.
///
/// Parameters (all a-rate, per sample): `volume` 0...4 (output), `input.N.volume` 0...4,
/// `input.N.pan` -1...1, `input.N.enable` 0 or 1. A disabled or silent input is skipped.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class MixerNode: GraphNode, @unchecked Sendable {
    /// Output channel count.
    public let channels: Int

    public init(id: String, sampleRate: Double, inputBusCount: Int = 1, properties: MixerProperties = MixerProperties()) {
        channels = properties.channels
        super.init(id: id, typeName: "mixer", inputBusCount: inputBusCount, outputBusCount: 1,
                   parameters: ParameterTable.mixer.parameterInfos(sampleRate: sampleRate, inputBusCount: inputBusCount, bandCount: 0),
                   declaredFormat: PartialStreamFormat(channelCount: properties.channels))
    }

    /// The largest `inputBusCount` a graph file may give a mixer.
    public static let maximumInputBusCount = 1024

    /// The `mixer` node type: 1...1024 input buses (the file's `inputBusCount`), each converted
    /// to the output's rate and channel count; `properties.channels`; ``ParameterTable/mixer``.
    package static let descriptor = NodeTypeDescriptor(
        name: "mixer", kind: .mixer, inputBuses: BusCountRule(defaultCount: 1, minimum: 1, maximum: maximumInputBusCount),
        outputBusCount: 1, propertyKeys: ["channels"], convertsInputs: true, parameters: .mixer,
        decode: { reader in
            var result = MixerProperties()
            if let channels = reader.integer("channels", in: 1...FormatDescription.maximumChannelCount) { result.channels = channels }
            return result
        },
        checkFormat: { options, context in
            guard let p = options as? MixerProperties else { return }
            context.checkDeclaredChannels(property: p.channels, propertyGiven: context.isGiven("channels"), what: "the property channels")
        },
        makeNode: { context in
            MixerNode(id: context.id, sampleRate: context.sampleRate, inputBusCount: context.inputBusCount,
                      properties: context.options(as: MixerProperties.self) ?? MixerProperties())
        })

    public override var convertsInputSampleRates: Bool { true }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        [.canonical(sampleRate: processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate),
                    channelCount: channels)]
    }

    public override func checkInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double) throws(AudioGraphError) -> Bool {
        try ResamplingInputAdapter.check(nodeID: id, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate)
        return true
    }

    public override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                          maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        try ResamplingInputAdapter(nodeID: id, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate,
                                   maximumFramesPerSlice: maximumFramesPerSlice)
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        MixerKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``MixerNode``.
final class MixerKernel: NodeKernel, @unchecked Sendable {
    private let inputCount: Int
    private let outputVolumeIndex: Int
    /// Per input: indices of volume, pan, enable.
    private let inputParameterIndices: UnsafeMutablePointer<(volume: Int, pan: Int, enable: Int)>
    /// Two scratch channels (a down-mix to stereo) and pointer tables for ChannelMixing.
    private let scratch: ChannelBufferStorage
    private let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let gainScratch: UnsafeMutablePointer<Float>
    /// Per input: the last constant pan and its gains (`ChannelMixing.monoPanGains`), so that a
    /// pan that holds costs no cosine per slice. NaN: none yet.
    private let panGains: UnsafeMutablePointer<(pan: Float, left: Float, right: Float)>

    init(node: MixerNode, maximumFramesPerSlice: Int) {
        inputCount = node.inputBusCount
        outputVolumeIndex = node.parameterIndex(of: ParameterAddress(name: "volume"))!
        inputParameterIndices = .allocate(capacity: max(1, node.inputBusCount))
        for i in 0..<node.inputBusCount {
            (inputParameterIndices + i).initialize(to: (
                node.parameterIndex(of: ParameterAddress(scope: .input, element: i, name: "volume"))!,
                node.parameterIndex(of: ParameterAddress(scope: .input, element: i, name: "pan"))!,
                node.parameterIndex(of: ParameterAddress(scope: .input, element: i, name: "enable"))!))
        }
        scratch = ChannelBufferStorage(channelCount: 2, capacity: maximumFramesPerSlice)
        inputPointers = .allocate(capacity: 1024)
        outputPointers = .allocate(capacity: 1024)
        gainScratch = .allocate(capacity: maximumFramesPerSlice)
        gainScratch.initialize(repeating: 0, count: maximumFramesPerSlice)
        panGains = .allocate(capacity: max(1, node.inputBusCount))
        panGains.initialize(repeating: (.nan, 0, 0), count: max(1, node.inputBusCount))
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        inputParameterIndices.deallocate()
        inputPointers.deallocate()
        outputPointers.deallocate()
        gainScratch.deallocate()
        panGains.deallocate()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        out.clear(frameCount: n)
        let outputVolume = parameterValues(outputVolumeIndex, context)
        var audible = false
        // A mono input with constant values waits for the next such input: the two are added in
        // one pass (`ChannelMixing.accumulateMonoPair`, the same sums in the same order).
        var pending: (x: UnsafePointer<Float>, gain: Float, left: Float, right: Float)? = nil
        let stereo = out.channelCount == 2
        for i in 0..<inputCount {
            let indices = inputParameterIndices[i]
            // Parameters advance every slice, pulled or not, so ramps do not depend on silence.
            let volume = parameterValues(indices.volume, context)
            let pan = parameterValues(indices.pan, context)
            let enable = parameterValues(indices.enable, context)
            if enable.isConstant && enable.constant < 0.5 { continue }
            guard let input = inputs.pull(i), !input.isSilent else { continue }
            audible = true
            if stereo && input.buffer.channelCount == 1 && enable.isConstant && volume.values == nil && pan.values == nil {
                let gains = monoPanGains(input: i, pan: pan.constant)
                let x = UnsafePointer(input.buffer.channel(0))
                if let p = pending {
                    ChannelMixing.accumulateMonoPair(p.x, gain: p.gain, left: p.left, right: p.right,
                                                     x, gain: volume.constant, left: gains.left, right: gains.right,
                                                     intoLeft: out.channel(0), right: out.channel(1), frameCount: n)
                    pending = nil
                } else {
                    pending = (x, volume.constant, gains.left, gains.right)
                }
                continue
            }
            if let p = pending {
                ChannelMixing.accumulateMono(p.x, gain: p.gain, left: p.left, right: p.right,
                                             intoLeft: out.channel(0), right: out.channel(1), frameCount: n)
                pending = nil
            }
            var gain = Self.values(volume)
            if !enable.isConstant {
                for f in 0..<n { gainScratch[f] = enable[f] >= 0.5 ? volume[f] : 0 }
                gain = .perSample(gainScratch)
            }
            mix(input.buffer, into: out, frameCount: n, pan: Self.values(pan), gain: gain)
        }
        if let p = pending {
            ChannelMixing.accumulateMono(p.x, gain: p.gain, left: p.left, right: p.right,
                                         intoLeft: out.channel(0), right: out.channel(1), frameCount: n)
        }
        if !audible {
            outputIsSilent[0] = true
            return
        }
        if !(outputVolume.isConstant && outputVolume.constant == 1) {
            for c in 0..<out.channelCount {
                let y = out.channel(c)
                if let v = outputVolume.values {
                    for f in 0..<n { y[f] *= v[f] }
                } else {
                    let v = outputVolume.constant
                    for f in 0..<n { y[f] *= v }
                }
            }
        }
        outputIsSilent[0] = false
    }

    /// Input `i`'s gains at a constant `pan` (cached while the pan holds). Real-time safe.
    @inline(__always)
    private func monoPanGains(input i: Int, pan: Float) -> (left: Float, right: Float) {
        if panGains[i].pan != pan {
            let g = ChannelMixing.monoPanGains(pan: pan)
            panGains[i] = (pan, g.left, g.right)
        }
        return (panGains[i].left, panGains[i].right)
    }

    @inline(__always)
    private static func values(_ v: ParameterValues) -> ChannelMixing.Values {
        if let p = v.values { return .perSample(UnsafePointer(p)) }
        return .constant(v.constant)
    }

    /// Adds one input into the output. Real-time safe.
    private func mix(_ input: ChannelBufferList, into out: ChannelBufferList, frameCount n: Int,
                     pan: ChannelMixing.Values, gain: ChannelMixing.Values) {
        if out.channelCount == 2 {
            var source = input
            if input.channelCount > 2 {
                // Down-mix to stereo first (speakers rules, or discrete).
                for c in 0..<input.channelCount { inputPointers[c] = UnsafePointer(input.channel(c)) }
                outputPointers[0] = scratch.list.channel(0)
                outputPointers[1] = scratch.list.channel(1)
                ChannelMixing.mix(input: UnsafeBufferPointer(start: inputPointers, count: input.channelCount),
                                  output: UnsafeBufferPointer(start: outputPointers, count: 2), frameCount: n)
                source = scratch.list
            }
            if source.channelCount == 1 {
                ChannelMixing.panMono(input: source.channel(0), left: out.channel(0), right: out.channel(1),
                                      frameCount: n, pan: pan, gain: gain, accumulate: true)
            } else {
                ChannelMixing.panStereo(left: source.channel(0), right: source.channel(1),
                                        outLeft: out.channel(0), outRight: out.channel(1),
                                        frameCount: n, pan: pan, gain: gain, accumulate: true)
            }
        } else {
            for c in 0..<input.channelCount { inputPointers[c] = UnsafePointer(input.channel(c)) }
            for c in 0..<out.channelCount { outputPointers[c] = out.channel(c) }
            ChannelMixing.mix(input: UnsafeBufferPointer(start: inputPointers, count: input.channelCount),
                              output: UnsafeBufferPointer(start: outputPointers, count: out.channelCount),
                              frameCount: n, gain: gain, accumulate: true)
        }
    }
}
