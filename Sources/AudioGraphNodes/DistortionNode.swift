// The multistage distortion effect (cf. AUDistortion / AVAudioUnitDistortion).
import AudioGraphCore

/// A multistage distortion (cf. `AVAudioUnitDistortion`, AUDistortion): an echo, a decimator
/// (sample-and-hold and bit reduction), a polynomial waveshaper, a ring modulator and a soft
/// clipper in series, each with its own mix, between a pre-gain and a final wet/dry mix. The
/// per-sample formulas are ``Distortion``'s (and Docs/Nodes.md's).
///
/// Parameters (``ParameterTable/distortion``, AUDistortion's names, ranges and defaults):
/// `delay` (ms, 0.1...500, 0.1), `decay` (0.1...50, 1), `delayMix` (%, 50), `decimation` (%, 50),
/// `rounding` (%, 0), `decimationMix` (%, 50), `linearTerm` (0...1, 1), `squaredTerm` (0...20, 0),
/// `cubicTerm` (0...20, 0), `polynomialMix` (%, 50), `ringModFreq1`/`ringModFreq2` (Hz,
/// 0.5...8000, 100), `ringModBalance` (%, 50), `ringModMix` (%, 0), `softClipGain` (dB, -80...20,
/// -6), `finalMix` (%, 50). All are followed per sample (ramps and automation are sample-exact).
/// Where `finalMix` is 0 the input passes bit for bit (the stages keep running).
///
/// Properties: `preset` (``DistortionProperties``), read when the node is made: the parameters
/// start at that preset's values.
///
/// Channels: the node takes its input's channels and processes each the same way.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class DistortionNode: GraphNode, @unchecked Sendable {
    // MARK: Control thread only
    /// The preset the parameters started from (nil: AUDistortion's defaults).
    public let preset: DistortionPreset?

    /// A distortion whose parameters start at `preset`'s values, or at the defaults.
    public init(id: String, sampleRate: Double, preset: DistortionPreset? = nil) {
        self.preset = preset
        super.init(id: id, typeName: "distortion", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.distortion.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
        if let preset {
            for (name, value) in zip(DistortionPreset.parameterNames, preset.values) {
                try? setParameter(name, value)
            }
        }
    }

    /// The `distortion` node type: one input, one output, `properties.preset`
    /// (``DistortionProperties``), ``ParameterTable/distortion``.
    package static let descriptor = NodeTypeDescriptor(
        name: "distortion", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, propertyKeys: ["preset"],
        parameters: .distortion,
        decode: { reader in
            var result = DistortionProperties()
            if let preset = reader.choice("preset", as: DistortionPreset.self) { result.preset = preset }
            return result
        },
        makeNode: { context in
            DistortionNode(id: context.id, sampleRate: context.sampleRate,
                           preset: context.options(as: DistortionProperties.self)?.preset)
        })

    /// The echo line: 500 ms of `Double` per channel.
    public override func stateMemoryEstimate(outputFormat: StreamFormat) -> (bytes: Int64, reason: String)? {
        let frames = Int64((Distortion.maximumDelay * outputFormat.sampleRate / 1000).rounded(.up)) + 2
        return (frames * 8 * Int64(outputFormat.channelCount),
                "500 ms of echo at \(ParameterInfo.format(outputFormat.sampleRate)) Hz × \(outputFormat.channelCount) channels")
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        DistortionKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``DistortionNode``.
final class DistortionKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation
    /// The parameter indices in AUDistortion's order.
    private let indices: [Int]
    private let sampleRate: Double

    // MARK: Render thread only
    private let chain: Distortion
    private let pointers: ChannelPointers

    init(node: DistortionNode, maximumFramesPerSlice: Int) {
        indices = DistortionPreset.parameterNames.map { node.parameterIndex(of: ParameterAddress(name: $0))! }
        let format = node.outputFormats[0]
        sampleRate = format.sampleRate
        chain = Distortion(sampleRate: format.sampleRate, channelCount: format.channelCount)
        pointers = ChannelPointers(capacity: format.channelCount)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        chain.reset()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let inputSilent = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        // The 16 parameters' values for this slice, in AUDistortion's order (a tuple: no allocation).
        var values = (parameterValues(indices[0], context), parameterValues(indices[1], context),
                      parameterValues(indices[2], context), parameterValues(indices[3], context),
                      parameterValues(indices[4], context), parameterValues(indices[5], context),
                      parameterValues(indices[6], context), parameterValues(indices[7], context),
                      parameterValues(indices[8], context), parameterValues(indices[9], context),
                      parameterValues(indices[10], context), parameterValues(indices[11], context),
                      parameterValues(indices[12], context), parameterValues(indices[13], context),
                      parameterValues(indices[14], context), parameterValues(indices[15], context))
        let allConstant = withUnsafeBytes(of: &values) { raw in
            raw.bindMemory(to: ParameterValues.self).allSatisfy(\.isConstant)
        }
        pointers.point(at: out)
        let channels = pointers.outputs
        let maximumDelayFrames = chain.maximumDelayFrames
        withUnsafeBytes(of: &values) { raw in
            let v = raw.bindMemory(to: ParameterValues.self)
            if allConstant {
                let settings = Distortion.Settings({ Double(v[$0].constant) }, sampleRate: sampleRate,
                                                   maximumDelayFrames: maximumDelayFrames)
                for i in 0..<n { chain.process(channels, frame: i, settings) }
            } else {
                for i in 0..<n {
                    let settings = Distortion.Settings({ Double(v[$0][i]) }, sampleRate: sampleRate,
                                                       maximumDelayFrames: maximumDelayFrames)
                    chain.process(channels, frame: i, settings)
                }
            }
        }
        // Silent only when the input was and nothing came out (the echo line flushes tiny values
        // to 0); always processing keeps the output independent of the slice size.
        outputIsSilent[0] = inputSilent && ChannelPointers.isAllZero(out, frameCount: n)
    }
}
