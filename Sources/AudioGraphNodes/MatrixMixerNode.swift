// AUMatrixMixer's mixing: any input channel to any output channel through a crosspoint gain, with input, output and master volumes.
import AudioGraphCore

/// A matrix mixer (cf. `kAudioUnitSubType_MatrixMixer`; graph type `matrixMixer`): several input
/// buses and several output buses of given channel counts; every input channel reaches every
/// output channel through its own crosspoint gain.
///
/// **Channels** are numbered as AUMatrixMixer numbers them, sequentially across the buses: with
/// `inputs` `[2, 1, 2]` the stereo bus 0 has input channels 0 and 1, the mono bus 1 channel 2,
/// bus 2 channels 3 and 4; output channels likewise across `outputs`.
///
/// **Gains** (AUMatrixMixer's four `kMatrixMixerParam_Volume` controls on one route; all linear,
/// all a-rate: automation and ramps apply per frame, as for every parameter):
/// - `crosspoint.I.O`: input channel `I` to output channel `O` (AU: global scope, element
///   `I << 16 | O`); range -16...16 (a negative gain matrixes mid/side), default 0 — nothing is
///   routed until a crosspoint is set;
/// - `inputChannel.I.volume`: input channel `I` (AU: input scope, element `I`); 0...16, default 1;
/// - `outputChannel.O.volume`: output channel `O` (AU: output scope, element `O`); 0...16, default 1;
/// - `volume`: the master volume (AU: global scope, element `0xFFFFFFFF`); 0...16, default 1.
///
/// Per frame `n`, in single precision and in this order:
/// `y_O[n] = (Σ_I (crosspoint_IO[n] · inputVolume_I[n]) · x_I[n]) · (outputVolume_O[n] · volume[n])`,
/// the sum over the input channels in increasing order, skipping silent or unconnected input
/// buses and crosspoints that hold 0 for the whole slice. An output bus is silent when no term
/// reaches it. The output does not depend on slice sizes.
///
/// **Formats**: every bus at the graph's rate (no conversion, as AUMatrixMixer); a connected
/// input must have its bus's channel count (the engine refuses another when the graph is
/// checked). Buses: 1...32 per side, at most 64 channels per side.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class MatrixMixerNode: GraphNode, @unchecked Sendable {
    /// `properties` of a `matrixMixer` node: channel counts per bus.
    public struct Options: Hashable, Sendable {
        /// Channels of each input bus (1...32 buses, 1...64 channels in all; default `[2]`).
        public var inputs: [Int]
        /// Channels of each output bus (1...32 buses, 1...64 channels in all; default `[2]`).
        public var outputs: [Int]
        public init(inputs: [Int] = [2], outputs: [Int] = [2]) {
            self.inputs = inputs
            self.outputs = outputs
        }
    }

    /// The most buses per side (32, as the other variable-bus nodes).
    public static let maximumBusCount = 32
    /// The most channels per side (64: 4096 crosspoints).
    public static let maximumChannelCount = 64

    /// The options it was made with.
    public let options: Options
    /// Input channels in all (the matrix's rows).
    public let inputChannelCount: Int
    /// Output channels in all (the matrix's columns).
    public let outputChannelCount: Int

    /// A matrix mixer with `options`' buses; throws `invalidProperty` for bus or channel counts out of range.
    public init(id: String, sampleRate: Double, options: Options = Options()) throws(AudioGraphError) {
        if let reason = Self.problem(options) { throw .invalidProperty(node: id, name: reason.key, reason: reason.text) }
        self.options = options
        inputChannelCount = options.inputs.reduce(0, +)
        outputChannelCount = options.outputs.reduce(0, +)
        super.init(id: id, typeName: "matrixMixer", inputBusCount: options.inputs.count, outputBusCount: options.outputs.count,
                   parameters: Self.parameterInfos(options))
    }

    /// What is wrong with `options` (key and one line), or nil.
    package static func problem(_ options: Options) -> (key: String, text: String)? {
        for (key, counts) in [("inputs", options.inputs), ("outputs", options.outputs)] {
            if !(1...maximumBusCount).contains(counts.count) {
                return (key, "expected 1...\(maximumBusCount) buses, found \(counts.count)")
            }
            if let bad = counts.first(where: { !(1...maximumChannelCount).contains($0) }) {
                return (key, "a bus has 1...\(maximumChannelCount) channels, found \(bad)")
            }
            if counts.reduce(0, +) > maximumChannelCount {
                return (key, "at most \(maximumChannelCount) channels in all, found \(counts.reduce(0, +))")
            }
        }
        return nil
    }

    /// The address of the crosspoint from input channel `input` to output channel `output`: `crosspoint.I.O`.
    public static func crosspointAddress(input: Int, output: Int) -> ParameterAddress {
        ParameterAddress(scope: .global, element: input, group: "crosspoint", name: String(output))
    }

    /// The address of input channel `channel`'s volume: `inputChannel.I.volume`.
    public static func inputVolumeAddress(_ channel: Int) -> ParameterAddress {
        ParameterAddress(scope: .global, element: channel, group: "inputChannel", name: "volume")
    }

    /// The address of output channel `channel`'s volume: `outputChannel.O.volume`.
    public static func outputVolumeAddress(_ channel: Int) -> ParameterAddress {
        ParameterAddress(scope: .global, element: channel, group: "outputChannel", name: "volume")
    }

    /// The master volume's address: `volume`.
    public static let masterVolumeAddress = ParameterAddress(name: "volume")

    /// Every parameter for `options`: `volume`, the input volumes, the output volumes, then the
    /// crosspoints row by row (input channel major).
    public static func parameterInfos(_ options: Options) -> [ParameterInfo] {
        let inputs = options.inputs.reduce(0, +), outputs = options.outputs.reduce(0, +)
        func info(_ address: ParameterAddress, _ minimum: Double, _ defaultValue: Double) -> ParameterInfo {
            ParameterInfo(address: address, unit: .linearGain, minValue: minimum, maxValue: 16, defaultValue: defaultValue)
        }
        var infos = [info(masterVolumeAddress, 0, 1)]
        for i in 0..<inputs { infos.append(info(inputVolumeAddress(i), 0, 1)) }
        for o in 0..<outputs { infos.append(info(outputVolumeAddress(o), 0, 1)) }
        for i in 0..<inputs {
            for o in 0..<outputs { infos.append(info(crosspointAddress(input: i, output: o), -16, 0)) }
        }
        return infos
    }

    /// The `matrixMixer` node type: properties `inputs` and `outputs` (channels per bus, each
    /// `[2]` by default); connections name the buses (`"mx:1"`). The file's bus check allows 32 on
    /// each side; the node's own counts are checked with the engine's rules. Its parameters
    /// follow from the options (``parameterInfos(_:)``).
    package static let descriptor = NodeTypeDescriptor(
        name: "matrixMixer", kind: .mixer, inputBuses: .fixed(maximumBusCount), outputBusCount: maximumBusCount,
        propertyKeys: ["inputs", "outputs"],
        decode: { reader in
            var o = Options()
            if let v = reader.integers("inputs", in: 1...maximumChannelCount) { o.inputs = v }
            if let v = reader.integers("outputs", in: 1...maximumChannelCount) { o.outputs = v }
            if let p = problem(o) { reader.reportInvalid(p.key, p.text) }
            return o
        },
        optionParameters: { options in
            let o = options as? Options ?? Options()
            let i = o.inputs.reduce(0, +), n = o.outputs.reduce(0, +)
            return OptionParameters(infos: parameterInfos(o), unknownReason:
                "a matrixMixer of \(i) input and \(n) output channels has volume, inputChannel.0...\(i - 1).volume, outputChannel.0...\(n - 1).volume and crosspoint.I.O (I < \(i), O < \(n))")
        },
        makeNode: { context throws(AudioGraphError) -> GraphNode in
            try MatrixMixerNode(id: context.id, sampleRate: context.sampleRate, options: context.options(as: Options.self) ?? Options())
        })

    /// Each output bus with its channel count, at the inputs' rate; a connected input with another
    /// channel count than its bus is refused.
    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        for (bus, format) in inputFormats.enumerated() {
            if let format, bus < options.inputs.count, format.channelCount != options.inputs[bus] {
                throw .formatNotSupported(node: id, reason: "input bus \(bus) has \(options.inputs[bus]) channel(s); what is connected has \(format.channelCount)")
            }
        }
        let rate = processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        return options.outputs.map { StreamFormat.canonical(sampleRate: rate, channelCount: $0) }
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        MatrixMixerKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``MatrixMixerNode``.
final class MatrixMixerKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation
    private let inputChannels: Int
    private let outputChannels: Int
    /// Per input bus: its first input channel and channel count.
    private let inputBusFirst: UnsafeMutablePointer<Int>
    private let inputBusChannels: UnsafeMutablePointer<Int>
    private let inputBusCount: Int
    /// Per output channel: its bus and channel within the bus.
    private let outputBus: UnsafeMutablePointer<Int>
    private let outputChannelInBus: UnsafeMutablePointer<Int>
    /// Parameter indices.
    private let masterIndex: Int
    private let inputVolumeIndex: UnsafeMutablePointer<Int>
    private let outputVolumeIndex: UnsafeMutablePointer<Int>
    /// Row major: `[i * outputChannels + o]`.
    private let crosspointIndex: UnsafeMutablePointer<Int>

    // MARK: Render thread only (sized at init)
    /// Per input channel: its samples this slice, nil when its bus is silent or unconnected.
    private let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// Per input channel: its volume this slice; per output channel likewise; the crosspoints.
    private let inputVolumes: UnsafeMutablePointer<ParameterValues>
    private let outputVolumes: UnsafeMutablePointer<ParameterValues>
    private let crosspoints: UnsafeMutablePointer<ParameterValues>

    init(node: MatrixMixerNode, maximumFramesPerSlice: Int) {
        let o = node.options
        inputChannels = node.inputChannelCount
        outputChannels = node.outputChannelCount
        inputBusCount = o.inputs.count
        inputBusFirst = .allocate(capacity: inputBusCount)
        inputBusChannels = .allocate(capacity: inputBusCount)
        var first = 0
        for (b, c) in o.inputs.enumerated() {
            inputBusFirst[b] = first
            inputBusChannels[b] = c
            first += c
        }
        outputBus = .allocate(capacity: outputChannels)
        outputChannelInBus = .allocate(capacity: outputChannels)
        var j = 0
        for (b, c) in o.outputs.enumerated() {
            for k in 0..<c {
                outputBus[j] = b
                outputChannelInBus[j] = k
                j += 1
            }
        }
        masterIndex = node.parameterIndex(of: MatrixMixerNode.masterVolumeAddress)!
        inputVolumeIndex = .allocate(capacity: inputChannels)
        for i in 0..<inputChannels { inputVolumeIndex[i] = node.parameterIndex(of: MatrixMixerNode.inputVolumeAddress(i))! }
        outputVolumeIndex = .allocate(capacity: outputChannels)
        for i in 0..<outputChannels { outputVolumeIndex[i] = node.parameterIndex(of: MatrixMixerNode.outputVolumeAddress(i))! }
        crosspointIndex = .allocate(capacity: inputChannels * outputChannels)
        for i in 0..<inputChannels {
            for k in 0..<outputChannels {
                crosspointIndex[i * outputChannels + k] = node.parameterIndex(of: MatrixMixerNode.crosspointAddress(input: i, output: k))!
            }
        }
        inputPointers = .allocate(capacity: inputChannels)
        inputPointers.initialize(repeating: nil, count: inputChannels)
        let zero = ParameterValues(constant: 0, values: nil)
        inputVolumes = .allocate(capacity: inputChannels)
        inputVolumes.initialize(repeating: zero, count: inputChannels)
        outputVolumes = .allocate(capacity: outputChannels)
        outputVolumes.initialize(repeating: zero, count: outputChannels)
        crosspoints = .allocate(capacity: inputChannels * outputChannels)
        crosspoints.initialize(repeating: zero, count: inputChannels * outputChannels)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        inputBusFirst.deallocate()
        inputBusChannels.deallocate()
        outputBus.deallocate()
        outputChannelInBus.deallocate()
        inputVolumeIndex.deallocate()
        outputVolumeIndex.deallocate()
        crosspointIndex.deallocate()
        inputPointers.deallocate()
        inputVolumes.deallocate()
        outputVolumes.deallocate()
        crosspoints.deallocate()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        // Every parameter is read every slice, so that ramps advance while the inputs are silent.
        let master = parameterValues(masterIndex, context)
        for i in 0..<inputChannels { inputVolumes[i] = parameterValues(inputVolumeIndex[i], context) }
        for k in 0..<outputChannels { outputVolumes[k] = parameterValues(outputVolumeIndex[k], context) }
        for x in 0..<(inputChannels * outputChannels) { crosspoints[x] = parameterValues(crosspointIndex[x], context) }
        for b in 0..<inputBusCount {
            let first = inputBusFirst[b], count = inputBusChannels[b]
            if b < inputs.count, let input = inputs.pull(b), !input.isSilent, input.channelCount == count {
                for c in 0..<count { inputPointers[first + c] = UnsafePointer(input.buffer.channel(c)) }
            } else {
                for c in 0..<count { inputPointers[first + c] = nil }
            }
        }
        for b in 0..<outputs.count { outputIsSilent[b] = true }
        for k in 0..<outputChannels {
            let y = outputs[outputBus[k]].channel(outputChannelInBus[k])
            var reached = false
            for i in 0..<inputChannels {
                guard let x = inputPointers[i] else { continue }
                let c = crosspoints[i * outputChannels + k], v = inputVolumes[i]
                if c.values == nil && c.constant == 0 { continue }
                if !reached { y.update(repeating: 0, count: n) }
                reached = true
                if c.values == nil && v.values == nil {
                    let g = c.constant * v.constant
                    for f in 0..<n { y[f] += g * x[f] }
                } else {
                    for f in 0..<n { y[f] += (c[f] * v[f]) * x[f] }
                }
            }
            if !reached {
                y.update(repeating: 0, count: n)
                continue
            }
            outputIsSilent[outputBus[k]] = false
            let ov = outputVolumes[k]
            if ov.values == nil && master.values == nil {
                let g = ov.constant * master.constant
                for f in 0..<n { y[f] *= g }
            } else {
                for f in 0..<n { y[f] *= ov[f] * master[f] }
            }
        }
    }
}
