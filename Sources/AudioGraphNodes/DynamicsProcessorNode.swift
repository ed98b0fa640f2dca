// The dynamics processor (cf. AUDynamicsProcessor): compression with head room, downward expansion, overall gain.
import AudioGraphCore

#if canImport(Glibc)
import Glibc
#endif

extension ParameterTable {
    /// ``DynamicsProcessorNode``'s parameters: AUDynamicsProcessor's names, ranges and defaults.
    package static let dynamicsProcessor = ParameterTable([
        .init(.global, "threshold", .decibels, -40, 20, -20),
        .init(.global, "headRoom", .decibels, 0.1, 40, 5),
        .init(.global, "expansionRatio", .generic, 1, 50, 2),
        .init(.global, "expansionThreshold", .decibels, -120, 0, -100),
        .init(.global, "attackTime", .seconds, 0.0001, 0.2, 0.001),
        .init(.global, "releaseTime", .seconds, 0.01, 3, 0.05),
        .init(.global, "overallGain", .decibels, -40, 40, 0),
    ])
}

/// A dynamics processor with AUDynamicsProcessor's parameters (graph type `dynamicsProcessor`).
/// Apple does not document the unit's curves; this node's are stated here and in Docs/Nodes.md.
/// Per frame, from the loudest channel's level `L = 20·log10(max_c |x_c[n]|)` (dB):
///
/// ```
/// out(L) = T + H·(1 - exp(-(L - T)/H))       L > T   (compression: slope 1 at T, never above T + H)
///        = E + (L - E)·expansionRatio        L < E   (downward expansion)
///        = L                                 otherwise
/// target = out(L) - L                        (dB; silence: the expansion's value at -120 dB)
/// g      = target + (g - target)·a           a = exp(-1/(attackTime·rate)) when target < g,
///                                              exp(-1/(releaseTime·rate)) when it is above
/// y_c[n] = x_c[n] · 10^((g + overallGain)/20)
/// ```
///
/// with T `threshold`, H `headRoom`, E `expansionThreshold`. No look-ahead, no latency.
/// ``compressionAmount`` is `g` in dB as of the last complete 128-frame quantum (negative when the
/// unit reduces the level). Parameters are read at the first frame of each 128-frame quantum
/// counted from the node's start, so output does not depend on slice sizes.
///
/// Thread safety: configure on a control thread; parameters may be set and ``compressionAmount``
/// read from any thread.
public final class DynamicsProcessorNode: GraphNode, @unchecked Sendable {
    // MARK: Shared (atomic)
    private let meter = ReductionMeter()

    public init(id: String, sampleRate: Double) {
        super.init(id: id, typeName: "dynamicsProcessor", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.dynamicsProcessor.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    /// The `dynamicsProcessor` node type: one input, one output, no properties, ``ParameterTable/dynamicsProcessor``.
    package static let descriptor = NodeTypeDescriptor(
        name: "dynamicsProcessor", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, parameters: .dynamicsProcessor
    ) { context in DynamicsProcessorNode(id: context.id, sampleRate: context.sampleRate) }

    /// The gain the unit applies before `overallGain`, in dB (AUDynamicsProcessor's
    /// `compressionAmount`), as of the last complete 128-frame quantum. Any thread.
    public var compressionAmount: Float { meter.value }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        meter.store(0)
        return DynamicsProcessorKernel(node: self, meter: meter, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``DynamicsProcessorNode``.
final class DynamicsProcessorKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation
    private let indices: [Int]
    private let channelCount: Int
    private let sampleRate: Double
    private let meter: ReductionMeter

    // MARK: Render thread only
    private var frame: Int64 = 0
    private var gain = 0.0
    private var threshold = -20.0, headRoom = 5.0, expansionRatio = 2.0, expansionThreshold = -100.0
    private var attack = 0.0, release = 0.0, overall = 1.0

    init(node: DynamicsProcessorNode, meter: ReductionMeter, maximumFramesPerSlice: Int) {
        indices = ["threshold", "headRoom", "expansionRatio", "expansionThreshold", "attackTime", "releaseTime", "overallGain"]
            .map { node.parameterIndex(of: ParameterAddress(name: $0))! }
        channelCount = node.outputFormats[0].channelCount
        sampleRate = node.outputFormats[0].sampleRate
        self.meter = meter
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        frame = 0
        gain = 0
        meter.store(0)
    }

    /// The static curve's gain in dB at level `level` (dB).
    @inline(__always)
    private func target(_ level: Double) -> Double {
        if level > threshold { return threshold + headRoom * (1 - exp(-(level - threshold) / headRoom)) - level }
        if level < expansionThreshold { return (level - expansionThreshold) * (expansionRatio - 1) }
        return 0
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        _ = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        let t = parameterValues(indices[0], context), h = parameterValues(indices[1], context)
        let er = parameterValues(indices[2], context), et = parameterValues(indices[3], context)
        let a = parameterValues(indices[4], context), r = parameterValues(indices[5], context)
        let og = parameterValues(indices[6], context)
        var allZero = true
        for i in 0..<n {
            if frame % 128 == 0 {
                threshold = Double(t[i]); headRoom = Double(h[i])
                expansionRatio = Double(er[i]); expansionThreshold = Double(et[i])
                attack = exp(-1 / (Double(a[i]) * sampleRate))
                release = exp(-1 / (Double(r[i]) * sampleRate))
                overall = Double(og[i])
            }
            var x: Float = 0
            for c in 0..<channelCount { x = max(x, abs(out.channel(c)[i])) }
            let level = x > 1e-6 ? 20 * log10(Double(x)) : -120
            if level.isFinite {
                let goal = target(level)
                gain = goal + (gain - goal) * (goal < gain ? attack : release)
            }
            let g = Float(pow(10, (gain + overall) / 20))
            for c in 0..<channelCount {
                let y = out.channel(c)
                y[i] *= g
                if y[i] != 0 { allZero = false }
            }
            frame += 1
            if frame % 128 == 0 { meter.store(Float(gain)) }
        }
        outputIsSilent[0] = allZero
    }
}
