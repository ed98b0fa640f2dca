// The compressor effect: Web Audio's DynamicsCompressorNode processing model (6 ms look-ahead, makeup gain).
import AudioGraphCore
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

extension ParameterTable {
    /// ``DynamicsCompressorNode``'s parameters, with Web Audio's ranges and defaults (all k-rate:
    /// read at the first frame of each 128-frame render quantum).
    package static let compressor = ParameterTable([
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
    package static let descriptor = NodeTypeDescriptor(
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

/// Render side of ``DynamicsCompressorNode``. The gain is followed in dB (the spec's
/// multiplicative steps are additions there: `g·10^(±10/(20·t·sr))` is `g_dB ± 10/(t·sr)`), so a
/// frame costs one logarithm while the level is above the threshold and one exponential while
/// the gain moves.
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
    /// Per channel, the last `delayFrames` input frames then the slice (a linear look-ahead line).
    private let history: UnsafeMutablePointer<Float>
    private let historyStride: Int
    /// The slice's gains.
    private let gains: UnsafeMutablePointer<Float>
    /// Frames left in the current k-rate quantum (0: read the parameters at the next frame).
    private var quantumLeft = 0
    /// The compressor gain `g` in dB (0 = 1).
    private var gainDB = 0.0
    private var lastGainDB = 0.0
    private var lastGain: Float = 1
    // The quantum's k-rate values.
    private var curve = CompressionCurve(threshold: -24, knee: 30, ratio: 12)
    private var linearThreshold = 0.0
    private var makeupGain = 1.0
    private var attackStepDB = 0.0
    private var releaseStepDB = 0.0

    /// dB per natural-log unit of amplitude (20 / ln 10) and back.
    private static let dbPerNeper = 20 / M_LN10
    private static let neperPerDB = M_LN10 / 20

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
        historyStride = delayFrames + maximumFramesPerSlice
        history = .allocate(capacity: max(1, historyStride * channelCount))
        history.initialize(repeating: 0, count: max(1, historyStride * channelCount))
        gains = .allocate(capacity: max(1, maximumFramesPerSlice))
        gains.initialize(repeating: 1, count: max(1, maximumFramesPerSlice))
        self.meter = meter
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        history.deallocate()
        gains.deallocate()
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        history.update(repeating: 0, count: max(1, historyStride * channelCount))
        quantumLeft = 0
        gainDB = 0
        lastGainDB = 0
        lastGain = 1
        meter.store(0)
    }

    /// The k-rate values at frame `i` of this slice.
    @inline(__always)
    private func loadQuantum(_ t: ParameterValues, _ k: ParameterValues, _ r: ParameterValues,
                             _ a: ParameterValues, _ rl: ParameterValues, at i: Int) {
        curve = CompressionCurve(threshold: Double(t[i]), knee: Double(k[i]), ratio: Double(r[i]))
        linearThreshold = exp(curve.threshold * Self.neperPerDB)
        makeupGain = exp(-0.6 * curve.apply(0) * Self.neperPerDB)
        let attackFrames = Double(a[i]) * sampleRate
        attackStepDB = attackFrames > 0 ? 10 / attackFrames : .infinity
        let releaseFrames = Double(rl[i]) * sampleRate
        releaseStepDB = releaseFrames > 0 ? 10 / releaseFrames : .infinity
        lastGainDB = .nan  // the makeup may have changed
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        _ = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        let t = parameterValues(thresholdIndex, context), k = parameterValues(kneeIndex, context)
        let r = parameterValues(ratioIndex, context), a = parameterValues(attackIndex, context)
        let rl = parameterValues(releaseIndex, context)
        let channels = channelCount, d = delayFrames
        // 1. The gain of every frame, from the loudest channel.
        for i in 0..<n {
            if quantumLeft == 0 {
                loadQuantum(t, k, r, a, rl, at: i)
                quantumLeft = DynamicsCompressorNode.quantumFrames
            }
            var x: Float = 0
            for c in 0..<channels { x = max(x, abs(out.channel(c)[i])) }
            let level = Double(x)
            var attenuationDB = 0.0
            if !level.isFinite {
                attenuationDB = gainDB  // NaN or infinity: the detector keeps its state
            } else if level >= 0.0001 && level > linearThreshold {
                let db = log(level) * Self.dbPerNeper
                attenuationDB = min(0, curve.apply(db) - db)
            }
            if attenuationDB > gainDB {
                gainDB = min(0, gainDB + releaseStepDB)   // releasing: +10 dB per `release`
            } else {
                gainDB = max(attenuationDB, gainDB - attackStepDB)   // attacking: -10 dB per `attack`
            }
            if gainDB != lastGainDB {
                lastGainDB = gainDB
                lastGain = Float(exp(gainDB * Self.neperPerDB) * makeupGain)
            }
            gains[i] = lastGain
            quantumLeft -= 1
            if quantumLeft == 0 { meter.store(Float(gainDB)) }
        }
        // 2. Each channel: in[n - D] · gain[n], through a linear line of D + n frames.
        for c in 0..<channels {
            let line = history + c * historyStride, y = out.channel(c)
            (line + d).update(from: y, count: n)
            for i in 0..<n { y[i] = line[i] * gains[i] }
            memmove(line, line + n, d * MemoryLayout<Float>.stride)
        }
        outputIsSilent[0] = ChannelPointers.isAllZero(out, frameCount: n)
    }
}
