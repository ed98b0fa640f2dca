// The compressor effect: Web Audio's DynamicsCompressorNode processing model (6 ms look-ahead, makeup gain).
import AudioGraphCore
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

extension ParameterTable {
    /// ``DynamicsCompressorNode``'s parameters, with Web Audio's ranges and defaults (all k-rate:
    /// read at the first frame of each 128-frame render quantum).
    public static let compressor = ParameterTable([
        .init(.global, "threshold", .decibels, -100, 0, -24),
        .init(.global, "knee", .decibels, 0, 40, 30),
        .init(.global, "ratio", .generic, 1, 20, 12),
        .init(.global, "attack", .seconds, 0, 1, 0.003),
        .init(.global, "release", .seconds, 0, 1, 0.25),
    ])
}

/// A dynamics compressor following the Web Audio API's `DynamicsCompressorNode` processing
/// model (graph type `compressor`). Every channel is delayed by the spec's fixed 6 ms
/// look-ahead (`round(0.006 · rate)` frames) and multiplied by one reduction gain computed per
/// frame from the loudest channel:
///
/// ```
/// x      = max over channels |in_c[n]|                 (the detector's input)
/// a      = 1 if x < 0.0001, else 10^((C(xdB) - xdB)/20)   (attenuation, xdB = 20·log10 x)
/// releasing = a > g
/// d      = min(1, a)                                    (detector curve: rate 1)
/// g      = releasing ? min(1, g · 10^(10/(20·release·rate)))      (+10 dB per `release` s)
///                    : max(d, g · 10^(-10/(20·attack·rate)))      (-10 dB per `attack` s)
/// out_c[n] = in_c[n - D] · g · M,   M = 10^(-0.6 · C(0)/20)       (makeup gain)
/// ```
///
/// The compression curve `C` in dB, threshold T, knee K, ratio R: `C(x) = x` up to T; over the
/// knee `T < x < T + K`, `C(x) = x + (1/R - 1)(x - T)²/(2K)` (continuous and differentiable at
/// both ends); above it `C(x) = T + K(1 + 1/R)/2 + (x - T - K)/R`. The spec leaves the knee,
/// detector and envelope shapes to the implementation within its constraints; these are ours
/// (Docs/Nodes.md). An attack or release of 0 jumps at once.
///
/// Parameters (``ParameterTable/compressor``): `threshold` (dB, -100...0, -24), `knee` (dB,
/// 0...40, 30), `ratio` (1...20, 12), `attack` (s, 0...1, 0.003), `release` (s, 0...1, 0.25),
/// all k-rate as in Web Audio: read at the first frame of each 128-frame quantum counted from
/// the node's start, so output does not depend on slice sizes. ``reduction`` is the gain
/// reduction `20·log10(g)` in dB (≤ 0; 0 with no signal), published at the end of each quantum.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread;
/// ``reduction`` may be read from any thread (an atomic).
public final class DynamicsCompressorNode: GraphNode, @unchecked Sendable {
    /// Frames per k-rate quantum (Web Audio's render quantum).
    public static let quantumFrames = 128
    /// The look-ahead in seconds (Web Audio's pre-delay).
    public static let lookAheadSeconds = 0.006

    // MARK: Shared (atomic)
    private let meter = ReductionMeter()

    public init(id: String, sampleRate: Double) {
        super.init(id: id, typeName: "compressor", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.compressor.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
    }

    /// The `compressor` node type: one input, one output, no properties, ``ParameterTable/compressor``.
    public static let descriptor = NodeTypeDescriptor(
        name: "compressor", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, parameters: .compressor
    ) { context in DynamicsCompressorNode(id: context.id, sampleRate: context.sampleRate) }

    /// The current gain reduction in dB (≤ 0; Web Audio's `reduction`), as of the last complete
    /// 128-frame quantum. Any thread; lock-free.
    public var reduction: Float { meter.value }

    /// The look-ahead delay in frames at `sampleRate`.
    public static func lookAheadFrames(sampleRate: Double) -> Int { Int((lookAheadSeconds * sampleRate).rounded()) }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        meter.store(0)
        return DynamicsCompressorKernel(node: self, meter: meter, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// A Float published by the render thread and read by any thread (relaxed: a meter).
final class ReductionMeter: Sendable {
    private let bits = Atomic<UInt32>(0)
    var value: Float { Float(bitPattern: bits.load(ordering: .relaxed)) }
    func store(_ v: Float) { bits.store(v.bitPattern, ordering: .relaxed) }
}

/// The static compression curve of ``DynamicsCompressorNode`` in dB.
struct CompressionCurve {
    var threshold: Double
    var knee: Double
    var ratio: Double

    /// `C(x)` for an input level `x` in dB.
    @inline(__always)
    func apply(_ x: Double) -> Double {
        if x <= threshold { return x }
        let slope = 1 / ratio
        if x < threshold + knee {
            let d = x - threshold
            return x + (slope - 1) * d * d / (2 * knee)
        }
        return threshold + knee * (1 + slope) / 2 + (x - threshold - knee) * slope
    }
}

/// Render side of ``DynamicsCompressorNode``.
final class DynamicsCompressorKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation
    private let thresholdIndex: Int
    private let kneeIndex: Int
    private let ratioIndex: Int
    private let attackIndex: Int
    private let releaseIndex: Int
    private let channelCount: Int
    private let delayFrames: Int
    private let sampleRate: Double
    private let meter: ReductionMeter

    // MARK: Render thread only
    /// The look-ahead lines, `delayFrames` per channel.
    private let delayLine: UnsafeMutablePointer<Float>
    private var delayPosition = 0
    /// Frames rendered since start (the k-rate quanta count from it).
    private var framesSinceStart: Int64 = 0
    private var compressorGain = 1.0
    private var detectorAverage = 0.0
    // The quantum's k-rate values.
    private var curve = CompressionCurve(threshold: -24, knee: 30, ratio: 12)
    private var linearThreshold = 0.0
    private var makeupGain = 1.0
    private var attackStep = 0.0
    private var releaseStep = 1.0

    init(node: DynamicsCompressorNode, meter: ReductionMeter, maximumFramesPerSlice: Int) {
        func index(_ name: String) -> Int { node.parameterIndex(of: ParameterAddress(name: name))! }
        thresholdIndex = index("threshold")
        kneeIndex = index("knee")
        ratioIndex = index("ratio")
        attackIndex = index("attack")
        releaseIndex = index("release")
        let format = node.outputFormats[0]
        channelCount = format.channelCount
        sampleRate = format.sampleRate
        delayFrames = DynamicsCompressorNode.lookAheadFrames(sampleRate: format.sampleRate)
        delayLine = .allocate(capacity: max(1, delayFrames * channelCount))
        delayLine.initialize(repeating: 0, count: max(1, delayFrames * channelCount))
        self.meter = meter
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit { delayLine.deallocate() }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        delayLine.update(repeating: 0, count: max(1, delayFrames * channelCount))
        delayPosition = 0
        framesSinceStart = 0
        compressorGain = 1
        detectorAverage = 0
        meter.store(0)
    }

    /// The k-rate values at frame `i` of this slice.
    @inline(__always)
    private func loadQuantum(_ t: ParameterValues, _ k: ParameterValues, _ r: ParameterValues,
                             _ a: ParameterValues, _ rl: ParameterValues, at i: Int) {
        curve = CompressionCurve(threshold: Double(t[i]), knee: Double(k[i]), ratio: Double(r[i]))
        linearThreshold = Self.dbToLinear(curve.threshold)
        makeupGain = Self.dbToLinear(-0.6 * curve.apply(0))
        let attackFrames = Double(a[i]) * sampleRate
        attackStep = attackFrames > 0 ? Self.dbToLinear(-10 / attackFrames) : 0
        let releaseFrames = Double(rl[i]) * sampleRate
        releaseStep = releaseFrames > 0 ? Self.dbToLinear(10 / releaseFrames) : .infinity
    }

    @inline(__always)
    static func dbToLinear(_ db: Double) -> Double { pow(10, db / 20) }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        _ = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        let t = parameterValues(thresholdIndex, context), k = parameterValues(kneeIndex, context)
        let r = parameterValues(ratioIndex, context), a = parameterValues(attackIndex, context)
        let rl = parameterValues(releaseIndex, context)
        let quantum = Int64(DynamicsCompressorNode.quantumFrames)
        let channels = channelCount, d = delayFrames
        var allZero = true
        for i in 0..<n {
            if framesSinceStart % quantum == 0 { loadQuantum(t, k, r, a, rl, at: i) }
            // Detector input: the loudest channel.
            var x: Float = 0
            for c in 0..<channels { x = max(x, abs(out.channel(c)[i])) }
            let level = Double(x)
            var attenuation = 1.0
            if !level.isFinite {
                attenuation = compressorGain  // NaN or infinity: the detector keeps its state
            } else if level >= 0.0001 && level > linearThreshold {
                let db = 20 * log10(level)
                attenuation = Self.dbToLinear(curve.apply(db) - db)
            }
            let releasing = attenuation > compressorGain
            detectorAverage = min(1, attenuation)
            if releasing {
                compressorGain = releaseStep.isInfinite ? 1 : min(1, compressorGain * releaseStep)
            } else {
                compressorGain = max(detectorAverage, compressorGain * attackStep)
            }
            let gain = Float(compressorGain * makeupGain)
            // The look-ahead: in_c[n - D] · gain.
            if d > 0 {
                for c in 0..<channels {
                    let y = out.channel(c), line = delayLine + c * d
                    let delayed = line[delayPosition]
                    line[delayPosition] = y[i]
                    y[i] = delayed * gain
                    if y[i] != 0 { allZero = false }
                }
                delayPosition = delayPosition + 1 == d ? 0 : delayPosition + 1
            } else {
                for c in 0..<channels {
                    let y = out.channel(c)
                    y[i] *= gain
                    if y[i] != 0 { allZero = false }
                }
            }
            framesSinceStart += 1
            if framesSinceStart % quantum == 0 { meter.store(Float(20 * log10(compressorGain))) }
        }
        outputIsSilent[0] = allZero
    }
}
