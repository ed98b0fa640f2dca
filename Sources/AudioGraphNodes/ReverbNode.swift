// The reverb effect (cf. AVAudioUnitReverb) over the project's one reverb engine.
import AudioGraphCore

/// A reverb (cf. `AVAudioUnitReverb`): the factory room `preset` (the property; default
/// `mediumHall`) rendered by ``Reverb``, the same engine as the environment's reverb send, and
/// `y = (1 - wetDryMix/100)·x + (wetDryMix/100)·wet` per channel.
///
/// Channels: the unit takes its input's channels. A mono input feeds the network mono and
/// receives its left output; a stereo input feeds it in stereo (two orthogonal input patterns)
/// and receives the left and right outputs; on a wider input, every channel feeds the network
/// (even channels with the left pattern, odd ones with the right, as further left/right pairs)
/// and every even channel receives the left output, every odd one the right.
///
/// Parameters: `wetDryMix` (%, 0...100, 50) and `bypass` (0/1, 0), both followed per sample
/// (automation, ramps and change lists are sample-exact). Where the mix is 0 or `bypass` is 1 the
/// input passes bit for bit; the network keeps running either way, so the tail and the output
/// do not depend on how the frames are sliced or on when the mix changed.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread;
/// `setProperty("preset", ...)` queues the new room for the render thread (the tail restarts).
public final class ReverbNode: GraphNode, @unchecked Sendable {
    // MARK: Control thread only
    /// The room.
    public private(set) var preset: ReverbPreset

    public init(id: String, sampleRate: Double, preset: ReverbPreset = .mediumHall) {
        self.preset = preset
        super.init(id: id, typeName: "reverb", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.reverb.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    /// The `reverb` node type: one input, one output, `properties.preset` (``ReverbProperties``),
    /// ``ParameterTable/reverb``.
    package static let descriptor = NodeTypeDescriptor(
        name: "reverb", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, propertyKeys: ["preset"],
        parameters: .reverb,
        decode: { reader in
            var result = ReverbProperties()
            if let preset = reader.choice("preset", as: ReverbPreset.self) { result.preset = preset }
            return result
        },
        makeNode: { context in
            ReverbNode(id: context.id, sampleRate: context.sampleRate,
                       preset: context.options(as: ReverbProperties.self)?.preset ?? .mediumHall)
        })

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        ReverbKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    public override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        guard name == "preset" else { throw .invalidProperty(node: id, name: name, reason: "no such property (a reverb has preset)") }
        guard Self.preset(value) != nil else {
            throw .invalidProperty(node: id, name: name, reason: "expected one of \(ReverbPreset.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    public override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        guard name == "preset", let p = Self.preset(value) else { return nil }
        preset = p
        return ReverbKernel.PresetChange(p)
    }

    private static func preset(_ value: any Sendable) -> ReverbPreset? {
        if let p = value as? ReverbPreset { return p }
        if let s = value as? String { return ReverbPreset(rawValue: s) }
        return nil
    }
}

/// Render side of ``ReverbNode``.
final class ReverbKernel: NodeKernel, @unchecked Sendable {
    /// A new room for the render thread.
    final class PresetChange: KernelMessage, @unchecked Sendable {
        let preset: Reverb.Preset
        init(_ preset: ReverbPreset) { self.preset = Reverb.Preset(rawValue: preset.rawValue) ?? .mediumHall }
    }

    // MARK: Fixed at creation
    private let wetIndex: Int
    private let bypassIndex: Int
    private let channelCount: Int

    // MARK: Render thread only
    private let reverb: Reverb
    /// The network's outputs and, for inputs wider than stereo, its summed left/right inputs.
    private let scratch: ChannelBufferStorage

    init(node: ReverbNode, maximumFramesPerSlice: Int) {
        wetIndex = node.parameterIndex(of: ParameterAddress(name: "wetDryMix"))!
        bypassIndex = node.parameterIndex(of: ParameterAddress(name: "bypass"))!
        let format = node.outputFormats[0]
        channelCount = format.channelCount
        reverb = Reverb(sampleRate: format.sampleRate, preset: Reverb.Preset(rawValue: node.preset.rawValue) ?? .mediumHall)
        scratch = ChannelBufferStorage(channelCount: 4, capacity: maximumFramesPerSlice)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        reverb.reset()
    }

    override func receive(_ message: KernelMessage) {
        if let change = message as? PresetChange { reverb.setPreset(change.preset) }
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let inputSilent = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        let wetL = scratch.list.channel(0), wetR = scratch.list.channel(1)
        // The network's input: the channels as they are (mono, stereo) or summed into a pair.
        if channelCount <= 2 {
            reverb.process(inputLeft: out.channel(0), inputRight: channelCount == 2 ? UnsafePointer(out.channel(1)) : nil,
                           left: wetL, right: wetR, frameCount: n, accumulate: false)
        } else {
            let sumL = scratch.list.channel(2), sumR = scratch.list.channel(3)
            sumL.update(from: out.channel(0), count: n)
            sumR.update(from: out.channel(1), count: n)
            for c in 2..<channelCount {
                let x = out.channel(c), sum = c % 2 == 0 ? sumL : sumR
                for i in 0..<n { sum[i] += x[i] }
            }
            reverb.process(inputLeft: sumL, inputRight: sumR, left: wetL, right: wetR, frameCount: n, accumulate: false)
        }
        let wet = parameterValues(wetIndex, context)
        let bypass = parameterValues(bypassIndex, context)
        if wet.isConstant && bypass.isConstant {
            let w = bypass[0] >= 0.5 ? 0 : wet[0] / 100
            if w != 0 {
                for c in 0..<channelCount {
                    let y = out.channel(c), r = c % 2 == 0 ? wetL : wetR
                    for i in 0..<n { y[i] = (1 - w) * y[i] + w * r[i] }
                }
            }
        } else {
            for c in 0..<channelCount {
                let y = out.channel(c), r = c % 2 == 0 ? wetL : wetR
                for i in 0..<n {
                    let w = bypass[i] >= 0.5 ? 0 : wet[i] / 100
                    if w != 0 { y[i] = (1 - w) * y[i] + w * r[i] }
                }
            }
        }
        // Silent only when the input was and the tail has died out (the network flushes tiny
        // values to 0); always processing keeps the output independent of the slice size.
        outputIsSilent[0] = inputSilent && ChannelPointers.isAllZero(out, frameCount: n)
    }
}
