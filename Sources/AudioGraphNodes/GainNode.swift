// Web Audio's GainNode: every input sample times the a-rate `gain` parameter.

/// A gain stage (Web Audio's `GainNode`): `y[c][n] = x[c][n] · gain[n]` for every channel,
/// `gain` a-rate (per sample, automation and ramps as every parameter), single-precision as
/// the spec computes it. The output has the input's format; a silent or absent input gives a
/// silent output (the spec's "silent input produces silent output").
///
/// Parameters: `gain` (linear, ±3.4028235e38 — the spec's most-negative/most-positive single
/// float — default 1).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class GainNode: GraphNode, @unchecked Sendable {
    public init(id: String, sampleRate: Double) {
        super.init(id: id, typeName: "gain", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.gain.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    /// The `gain` node type: one input, one output, no properties, ``ParameterTable/gain``.
    package static let descriptor = NodeTypeDescriptor(
        name: "gain", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, parameters: .gain
    ) { context in GainNode(id: context.id, sampleRate: context.sampleRate) }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        GainKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

extension ParameterTable {
    /// ``GainNode``'s parameters: `gain` (Web Audio's range: the finite single floats; default 1).
    package static let gain = ParameterTable([
        .init(.global, "gain", .linearGain, -Double(Float.greatestFiniteMagnitude), Double(Float.greatestFiniteMagnitude), 1),
    ])
}

/// Render side of ``GainNode``.
final class GainKernel: NodeKernel, @unchecked Sendable {
    private let gainIndex: Int

    init(node: GainNode, maximumFramesPerSlice: Int) {
        gainIndex = node.parameterIndex(of: ParameterAddress(name: "gain"))!
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let gain = parameterValues(gainIndex, context)   // read every slice: ramps advance while silent
        guard let input = inputs.pull(0), !input.isSilent else {
            outputSilence(frameCount: n)
            return
        }
        for c in 0..<out.channelCount {
            let y = out.channel(c)
            guard c < input.channelCount else { y.update(repeating: 0, count: n); continue }
            let x = input.buffer.channel(c)
            if let g = gain.values {
                for i in 0..<n { y[i] = x[i] * g[i] }
            } else {
                let g = gain.constant
                for i in 0..<n { y[i] = x[i] * g }
            }
        }
        outputIsSilent[0] = false
    }
}
