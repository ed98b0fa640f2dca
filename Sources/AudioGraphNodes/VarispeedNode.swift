// The varispeed effect (cf. AVAudioUnitVarispeed): plays its input faster or slower, pitch following.
import AudioGraphCore

/// A varispeed (cf. `AVAudioUnitVarispeed`): output frame `n` is its input at position `t_n`,
/// `t_{n+1} = t_n + rate_n` (``VariableRateResampler``: windowed sinc, 64 zero crossings,
/// Kaiser β 9.7, 95 % bandwidth), so rate 2 halves the length and doubles every frequency.
/// The node pulls its input on its own timeline through ``VarispeedInputAdapter`` (like the
/// converter's ``ResamplingInputAdapter``), as many frames as the rates need.
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
    /// The engine the kernel and the input adapter share (set when the kernel is made, before
    /// the first plan that uses it is published).
    final class Shared: @unchecked Sendable {
        var resampler: VariableRateResampler?
    }

    // MARK: Immutable after init
    let shared = Shared()

    public init(id: String, sampleRate: Double) {
        super.init(id: id, typeName: "varispeed", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.varispeed.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    public override var pullsInputsOnTheirOwnTimeline: Bool { true }

    public override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                          maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        guard sourceFormat.sampleRate == targetSampleRate else {
            throw .sampleRateMismatch(source: "input", sourceRate: sourceFormat.sampleRate, destination: id, destinationRate: targetSampleRate)
        }
        return VarispeedInputAdapter(shared: shared, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        let kernel = VarispeedKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
        shared.resampler = kernel.resampler
        return kernel
    }
}

/// The varispeed's input: pulls the source on its own timeline, as many frames as the rates of
/// the slice need, through the shared ``VariableRateResampler``, and returns its output.
///
/// Thread safety: created on a control thread; `pull` and `start` on the render thread only.
final class VarispeedInputAdapter: InputAdapter, @unchecked Sendable {
    // MARK: Immutable after init
    private let shared: VarispeedNode.Shared
    private let maximumFramesPerSlice: Int

    // MARK: Render thread only
    private var upstreamTime: Int64 = 0

    init(shared: VarispeedNode.Shared, maximumFramesPerSlice: Int) {
        self.shared = shared
        self.maximumFramesPerSlice = maximumFramesPerSlice
    }

    override func start(atUpstreamSampleTime sampleTime: Int64) {
        upstreamTime = sampleTime
        shared.resampler?.reset()
    }

    override func pull(context: RenderContext, upstream: UpstreamSource) -> InputBuffer {
        let r = shared.resampler!
        r.process(frameCount: context.frameCount) { buffers, count in
            var done = 0
            while done < count {
                let n = min(maximumFramesPerSlice, count - done)
                let input = upstream.pull(sampleTime: upstreamTime, frameCount: n)
                upstreamTime += Int64(n)
                for c in 0..<buffers.count {
                    if c < input.channelCount && !input.isSilent {
                        (buffers[c] + done).update(from: input.buffer.channel(c), count: n)
                    } else {
                        (buffers[c] + done).update(repeating: 0, count: n)
                    }
                }
                done += n
            }
        }
        return InputBuffer(buffer: r.output.list, isSilent: false)
    }
}

/// Render side of ``VarispeedNode``: writes the slice's rates, then pulls the resampled input.
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
        let silent = ChannelPointers.loadInput(inputs.pull(0), into: outputs[0], frameCount: n)
        outputIsSilent[0] = silent || ChannelPointers.isAllZero(outputs[0], frameCount: n)
    }
}
