// The varispeed effect (cf. AVAudioUnitVarispeed): plays its input faster or slower, pitch following.
import AudioGraphCore

/// A varispeed (cf. `AVAudioUnitVarispeed`): output frame `n` is its input at position `t_n`,
/// `t_{n+1} = t_n + rate_n` (``VariableRateResampler``: windowed sinc, 64 zero crossings,
/// Kaiser β 9.7, 95 % bandwidth), so rate 2 halves the length and doubles every frequency.
/// The node pulls its input on the input's own timeline (a ``TimelineInputAdapter`` and
/// `RenderInputs.pull(_:frameCount:)`, as ``TimePitchNode`` does), as many frames as the rates need.
///
/// Parameters: `rate` (0.25...4, 1) and `bypass` (0/1, 0; bypassed frames play at rate 1),
/// followed per frame: a step (a change list, an automation event, `setParameter`) takes effect
/// exactly at its frame with the position continuous (the waveform does not jump); ramps and
/// automation curves are followed frame by frame. The output is time-aligned and does not
/// depend on the slice size; the node reads its input up to ``VariableRateResampler/lookahead(rate:)``
/// frames ahead of the position (reported by `AudioUnitVarispeed.latency`).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class VarispeedNode: GraphNode, @unchecked Sendable {
    public init(id: String, sampleRate: Double) {
        super.init(id: id, typeName: "varispeed", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.varispeed.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    /// The `varispeed` node type: one input, one output, no properties, ``ParameterTable/varispeed``.
    package static let descriptor = NodeTypeDescriptor(
        name: "varispeed", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, parameters: .varispeed
    ) { context in VarispeedNode(id: context.id, sampleRate: context.sampleRate) }

    /// True: the resampler consumes `rate` times the output.
    public override var pullsInputsOnTheirOwnTimeline: Bool { true }

    /// Its largest `rate` (value and automation): the input frames it consumes per output frame.
    public override var maximumInputFramesPerOutputFrame: Double {
        parameter("rate")?.largestScheduledValue ?? 1
    }

    /// A ``TimelineInputAdapter``: the input, unconverted, on its own timeline (its rate must be
    /// the graph's).
    public override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                          maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        guard sourceFormat.sampleRate == targetSampleRate else {
            throw .sampleRateMismatch(source: "input", sourceRate: sourceFormat.sampleRate, destination: id, destinationRate: targetSampleRate)
        }
        return TimelineInputAdapter()
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        VarispeedKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``VarispeedNode``: writes the slice's rates, then resamples the input it pulls
/// on the input's timeline.
final class VarispeedKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation
    private let rateIndex: Int
    private let bypassIndex: Int
    let resampler: VariableRateResampler

    init(node: VarispeedNode, maximumFramesPerSlice: Int) {
        rateIndex = node.parameterIndex(of: ParameterAddress(name: "rate"))!
        bypassIndex = node.parameterIndex(of: ParameterAddress(name: "bypass"))!
        resampler = VariableRateResampler(channelCount: node.outputFormats[0].channelCount, maximumFrames: maximumFramesPerSlice)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let rate = parameterValues(rateIndex, context)
        let bypass = parameterValues(bypassIndex, context)
        let rates = resampler.rates
        if rate.isConstant && bypass.isConstant {
            let r: Float = bypass[0] >= 0.5 ? 1 : rate[0]
            rates.update(repeating: r, count: n)
        } else {
            for i in 0..<n { rates[i] = bypass[i] >= 0.5 ? 1 : rate[i] }
        }
        let limit = maximumFramesPerSlice
        resampler.process(frameCount: n) { buffers, count in
            var done = 0
            while done < count {
                let m = min(limit, count - done)
                let input = inputs.pull(0, frameCount: m)
                for c in 0..<buffers.count { InputBuffer.copyChannel(c, of: input, to: buffers[c] + done, count: m) }
                done += m
            }
        }
        let silent = ChannelPointers.loadInput(InputBuffer(buffer: resampler.output.list, isSilent: false),
                                               into: outputs[0], frameCount: n)
        outputIsSilent[0] = silent || ChannelPointers.isAllZero(outputs[0], frameCount: n)
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        resampler.reset()
    }
}
