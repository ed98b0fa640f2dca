// The feedback delay effect (cf. AUDelay / AVAudioUnitDelay).

/// A delay effect (cf. `AVAudioUnitDelay`): per channel
/// `d[n] = x[n - D] + (feedback/100) * lp(d[n - D])`,
/// `y[n] = (1 - wetDryMix/100) * x[n] + (wetDryMix/100) * d[n]`, `D = delayTime * sampleRate`
/// (fractional: linear interpolation), `lp` the one-pole low-pass at `lowPassCutoff` (the
/// identity at sampleRate/2 and above). See ``DelayLine``.
///
/// Parameters: `delayTime` (s, 0...2, 1), `feedback` (%, -100...100, 50), `lowPassCutoff` (Hz,
/// 10...sampleRate/2, 15000), `wetDryMix` (%, 0...100, 100). `feedback` and `wetDryMix` follow
/// their values exactly per sample (a step is a step; use a ramp for a fade). `delayTime`
/// changes crossfade between the old and the new delay over 10 ms, and `lowPassCutoff` glides
/// over 10 ms, so neither clicks; per-sample `delayTime` values (a ramp or automation) are
/// followed in 10 ms crossfades. With the `smoothing` property false (``Options``) neither
/// glides: a `delayTime` change reads at the new delay from the next frame (Web Audio's
/// DelayNode) and the cutoff steps.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class DelayNode: GraphNode, @unchecked Sendable {
    /// `properties` of a `delay` node.
    public struct Options: Hashable, Sendable {
        /// Whether `delayTime` crossfades and `lowPassCutoff` glides over 10 ms (true); false:
        /// Web Audio's un-smoothed changes.
        public var smoothing: Bool
        public init(smoothing: Bool = true) { self.smoothing = smoothing }
    }

    /// The node's options.
    public let options: Options

    public init(id: String, sampleRate: Double, options: Options = Options()) {
        self.options = options
        super.init(id: id, typeName: "delay", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.delay.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    /// The `delay` node type: one input, one output, property `smoothing` (true),
    /// ``ParameterTable/delay``.
    package static let descriptor = NodeTypeDescriptor(
        name: "delay", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, propertyKeys: ["smoothing"], parameters: .delay,
        decode: { reader in
            var o = Options()
            if let smoothing = reader.bool("smoothing") { o.smoothing = smoothing }
            return o
        },
        makeNode: { context in
            DelayNode(id: context.id, sampleRate: context.sampleRate, options: context.options(as: Options.self) ?? Options())
        })

    /// The delay line: ``MemoryBudget/maximumDelayTime`` seconds per channel at the node's rate.
    public override func stateMemoryEstimate(outputFormat: StreamFormat) -> (bytes: Int64, reason: String)? {
        (MemoryBudget.delayLineBytes(sampleRate: outputFormat.sampleRate, channels: outputFormat.channelCount),
         "\(ParameterInfo.format(MemoryBudget.maximumDelayTime)) s of delay at \(ParameterInfo.format(outputFormat.sampleRate)) Hz × \(outputFormat.channelCount) channels")
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        DelayKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``DelayNode``.
final class DelayKernel: NodeKernel, @unchecked Sendable {
    // MARK: Render thread only (the delay line's state, pointer tables)
    private let line: DelayLine
    private let pointers: ChannelPointers

    // MARK: Fixed at creation
    private let delayTimeIndex: Int
    private let feedbackIndex: Int
    private let cutoffIndex: Int
    private let wetIndex: Int

    init(node: DelayNode, maximumFramesPerSlice: Int) {
        func index(_ name: String) -> Int { node.parameterIndex(of: ParameterAddress(name: name))! }
        delayTimeIndex = index("delayTime")
        feedbackIndex = index("feedback")
        cutoffIndex = index("lowPassCutoff")
        wetIndex = index("wetDryMix")
        let format = node.outputFormats[0]
        let p = node.parameters
        line = DelayLine(sampleRate: format.sampleRate, maximumChannelCount: format.channelCount,
                         delayTime: p[delayTimeIndex].value, feedback: p[feedbackIndex].value,
                         lowPassCutoff: p[cutoffIndex].value, wetDryMix: p[wetIndex].value, smoothing: node.options.smoothing)
        pointers = ChannelPointers(capacity: format.channelCount)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        line.reset()
    }

    @inline(__always)
    private func set(_ index: Int, _ v: ParameterValues, at i: Int) {
        let value = v.isConstant ? parameterStates[index].current : Double(v[i])
        switch index {
        case delayTimeIndex: line.setDelayTime(value)
        case feedbackIndex: line.setFeedback(value, rampFrames: 0)
        case cutoffIndex: line.setLowPassCutoff(value)
        default: line.setWetDryMix(value, rampFrames: 0)
        }
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let inputSilent = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        let delayTime = parameterValues(delayTimeIndex, context)
        let feedback = parameterValues(feedbackIndex, context)
        let cutoff = parameterValues(cutoffIndex, context)
        let wet = parameterValues(wetIndex, context)

        if delayTime.isConstant && feedback.isConstant && cutoff.isConstant && wet.isConstant {
            set(delayTimeIndex, delayTime, at: 0)
            set(feedbackIndex, feedback, at: 0)
            set(cutoffIndex, cutoff, at: 0)
            set(wetIndex, wet, at: 0)
            pointers.point(at: out)
            line.process(input: pointers.inputs, output: pointers.outputs, frameCount: n)
        } else {
            for i in 0..<n {
                set(delayTimeIndex, delayTime, at: i)
                set(feedbackIndex, feedback, at: i)
                set(cutoffIndex, cutoff, at: i)
                set(wetIndex, wet, at: i)
                pointers.point(at: out, frame: i)
                line.process(input: pointers.inputs, output: pointers.outputs, frameCount: 1)
            }
        }
        // A NaN or infinity in this slice leaves no trace in the line's memory.
        pointers.point(at: out)
        line.clearNonFinite(output: pointers.outputs, frameCount: n)
        // Silent only when the input was and the echoes have died out (tiny values are flushed
        // to 0 in the line, so this happens); always processing keeps the output independent of
        // the slice size.
        outputIsSilent[0] = inputSilent && ChannelPointers.isAllZero(out, frameCount: n)
    }
}
