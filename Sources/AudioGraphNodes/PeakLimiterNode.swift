// The look-ahead peak limiter (cf. AUPeakLimiter): no output sample above the ceiling, ever.
import AudioGraphCore
#if canImport(Glibc)
import Glibc
#endif

extension ParameterTable {
    /// ``PeakLimiterNode``'s parameters: AUPeakLimiter's `attackTime`, `decayTime` and `preGain`
    /// (their ranges and defaults), and the ceiling (a Linux addition; AUPeakLimiter's is 0 dBFS).
    package static let peakLimiter = ParameterTable([
        .init(.global, "attackTime", .seconds, 0.001, 0.03, 0.012),
        .init(.global, "decayTime", .seconds, 0.001, 0.06, 0.024),
        .init(.global, "preGain", .decibels, -40, 40, 0),
        .init(.global, "ceiling", .decibels, -40, 0, 0),
    ])
}

/// A look-ahead peak limiter (cf. AUPeakLimiter; graph type `limiter`): the input times
/// `preGain` is delayed by the look-ahead `L` frames and multiplied by a gain that is never
/// above what keeps every channel's sample within `ceiling`:
///
/// ```
/// p[n]   = preGain · x_c[n]                 (every channel c)
/// r[n]   = min(1, ceiling / max_c |p_c[n]|)  (the gain sample n needs)
/// m[n]   = min(r[n - L] ... r[n])            (sliding minimum over L + 1 frames)
/// s[n]   = mean(m[n - W + 1] ... m[n])       (attack: a W-frame boxcar, W = attackTime · rate ≤ L + 1)
/// e[n]   = s[n] if s[n] < e[n-1], else e[n-1] + (s[n] - e[n-1])·(1 - exp(-1/(decayTime · rate)))
/// y_c[n] = clamp(p_c[n - L] · e[n], ±ceiling)
/// ```
///
/// Each `m[n - j]` of the boxcar (j < W ≤ L + 1) is a minimum over a window containing frame
/// `n - L`, so `s[n] ≤ r[n - L]`, and the release only ever rises towards `s`: `|y| ≤ ceiling`
/// holds by construction; the final clamp only absorbs Float rounding (a unit in the last place).
/// The gain falls over `attackTime` before a peak arrives (a linear-in-time fade, no click) and
/// recovers with time constant `decayTime`.
///
/// **Latency**: `L = round(attackTime · rate)` frames, with `attackTime` as it is when the kernel
/// is made (initialize; the default 12 ms is 576 frames at 48 kHz). Later `attackTime` values
/// set the boxcar's length up to that look-ahead (larger ones are held to it).
///
/// Parameters (``ParameterTable/peakLimiter``): `attackTime` (s, 0.001...0.03, 0.012),
/// `decayTime` (s, 0.001...0.06, 0.024), `preGain` (dB, -40...40, 0), `ceiling` (dB, -40...0, 0);
/// all read at the first frame of each 128-frame quantum counted from the node's start (so
/// output does not depend on slice sizes).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class PeakLimiterNode: GraphNode, @unchecked Sendable {
    public init(id: String, sampleRate: Double) {
        super.init(id: id, typeName: "limiter", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.peakLimiter.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    /// The `limiter` node type: one input, one output, no properties, ``ParameterTable/peakLimiter``.
    package static let descriptor = NodeTypeDescriptor(
        name: "limiter", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, parameters: .peakLimiter
    ) { context in PeakLimiterNode(id: context.id, sampleRate: context.sampleRate) }

    /// The look-ahead (and latency) in frames for an attack time at `sampleRate`.
    public static func lookAheadFrames(attackTime: Double, sampleRate: Double) -> Int {
        max(1, Int((attackTime * sampleRate).rounded()))
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        PeakLimiterKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``PeakLimiterNode``.
final class PeakLimiterKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation
    private let attackIndex: Int
    private let decayIndex: Int
    private let preGainIndex: Int
    private let ceilingIndex: Int
    private let channelCount: Int
    private let sampleRate: Double
    /// The look-ahead L.
    private let lookAhead: Int

    // MARK: Render thread only
    /// The delayed (pre-gained) input, L frames per channel.
    private let delayLine: UnsafeMutablePointer<Float>
    private var delayPosition = 0
    /// Sliding minimum: a monotonic deque of (frame, value) in a ring of L + 2 entries.
    private let dequeFrames: UnsafeMutablePointer<Int64>
    private let dequeValues: UnsafeMutablePointer<Double>
    private var dequeHead = 0
    private var dequeCount = 0
    /// The last L + 1 sliding minima (the boxcar's window), a ring.
    private let minima: UnsafeMutablePointer<Double>
    private var minimaPosition = 0
    private var boxcarLength = 1
    private var boxcarSum = 1.0
    private var envelope = 1.0
    private var frame: Int64 = 0
    // The quantum's values.
    private var preGain: Float = 1
    private var ceiling: Float = 1
    private var decayCoefficient = 0.0

    init(node: PeakLimiterNode, maximumFramesPerSlice: Int) {
        func index(_ name: String) -> Int { node.parameterIndex(of: ParameterAddress(name: name))! }
        attackIndex = index("attackTime")
        decayIndex = index("decayTime")
        preGainIndex = index("preGain")
        ceilingIndex = index("ceiling")
        let format = node.outputFormats[0]
        channelCount = format.channelCount
        sampleRate = format.sampleRate
        lookAhead = PeakLimiterNode.lookAheadFrames(attackTime: node.parameters[attackIndex].value, sampleRate: format.sampleRate)
        delayLine = .allocate(capacity: lookAhead * channelCount)
        dequeFrames = .allocate(capacity: lookAhead + 2)
        dequeValues = .allocate(capacity: lookAhead + 2)
        minima = .allocate(capacity: lookAhead + 1)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
        reset()
    }

    deinit {
        delayLine.deallocate()
        dequeFrames.deallocate()
        dequeValues.deallocate()
        minima.deallocate()
    }

    private func reset() {
        delayLine.initialize(repeating: 0, count: lookAhead * channelCount)
        dequeFrames.initialize(repeating: 0, count: lookAhead + 2)
        dequeValues.initialize(repeating: 1, count: lookAhead + 2)
        minima.initialize(repeating: 1, count: lookAhead + 1)
        delayPosition = 0
        dequeHead = 0
        dequeCount = 0
        minimaPosition = 0
        boxcarLength = 1
        boxcarSum = 1
        envelope = 1
        frame = 0
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        reset()
    }

    /// Reads the quantum's values at frame `i`; a new attack length re-sums the boxcar.
    @inline(__always)
    private func loadQuantum(_ a: ParameterValues, _ dc: ParameterValues, _ pg: ParameterValues, _ cl: ParameterValues, at i: Int) {
        preGain = Float(pow(10, Double(pg[i]) / 20))
        ceiling = Float(pow(10, Double(cl[i]) / 20))
        let decayFrames = Double(dc[i]) * sampleRate
        decayCoefficient = 1 - exp(-1 / decayFrames)
        let w = min(lookAhead + 1, max(1, Int((Double(a[i]) * sampleRate).rounded())))
        if w != boxcarLength {
            boxcarLength = w
            var sum = 0.0
            let size = lookAhead + 1
            // The last w minima end just before minimaPosition.
            for j in 1...w { sum += minima[(minimaPosition - j + size) % size] }
            boxcarSum = sum
        }
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        _ = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        let a = parameterValues(attackIndex, context), dc = parameterValues(decayIndex, context)
        let pg = parameterValues(preGainIndex, context), cl = parameterValues(ceilingIndex, context)
        let channels = channelCount, l = lookAhead, size = l + 1, ring = l + 2
        var allZero = true
        for i in 0..<n {
            if frame % 128 == 0 { loadQuantum(a, dc, pg, cl, at: i) }
            // The gain this frame needs.
            var peak: Float = 0
            for c in 0..<channels {
                let p = out.channel(c)[i] * preGain
                out.channel(c)[i] = p
                peak = max(peak, abs(p))
            }
            let required: Double = peak > ceiling ? Double(ceiling) / Double(peak) : (peak.isNaN ? 0 : 1)
            // Sliding minimum over frames frame - L ... frame.
            while dequeCount > 0 && dequeValues[(dequeHead + dequeCount - 1) % ring] >= required { dequeCount -= 1 }
            dequeFrames[(dequeHead + dequeCount) % ring] = frame
            dequeValues[(dequeHead + dequeCount) % ring] = required
            dequeCount += 1
            while dequeFrames[dequeHead] < frame - Int64(l) {
                dequeHead = dequeHead + 1 == ring ? 0 : dequeHead + 1
                dequeCount -= 1
            }
            let minimum = dequeValues[dequeHead]
            // Boxcar over the last W minima.
            let leaving = minima[(minimaPosition - boxcarLength + size) % size]
            minima[minimaPosition] = minimum
            minimaPosition = minimaPosition + 1 == size ? 0 : minimaPosition + 1
            boxcarSum += minimum - leaving
            let smoothed = min(1, boxcarSum / Double(boxcarLength))
            envelope = smoothed < envelope ? smoothed : envelope + (smoothed - envelope) * decayCoefficient
            let gain = Float(envelope)
            for c in 0..<channels {
                let y = out.channel(c), line = delayLine + c * l
                let delayed = line[delayPosition]
                line[delayPosition] = y[i]
                let v = min(ceiling, max(-ceiling, delayed * gain))
                y[i] = v
                if v != 0 { allZero = false }
            }
            delayPosition = delayPosition + 1 == l ? 0 : delayPosition + 1
            frame += 1
        }
        outputIsSilent[0] = allZero
    }
}
