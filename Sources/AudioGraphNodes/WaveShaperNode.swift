// The waveshaper (cf. Web Audio's WaveShaperNode): a curve of any length, oversampling none/2x/4x.
import AudioGraphCore

#if canImport(Glibc)
import Glibc
#endif

/// How a ``WaveShaperNode`` oversamples (Web Audio's `OverSampleType`).
public enum WaveShaperOversample: String, CaseIterable, Hashable, Sendable {
    case none
    case twice = "2x"
    case fourTimes = "4x"

    /// The factor L.
    public var factor: Int {
        switch self {
        case .none: return 1
        case .twice: return 2
        case .fourTimes: return 4
        }
    }
}

/// The `properties` of a `waveShaper` node.
public struct WaveShaperProperties: Hashable, Sendable {
    /// The shaping curve (at least 2 values); nil passes the input unchanged (Web Audio's null curve).
    public var curve: [Float]?
    /// The oversampling (default none).
    public var oversample: WaveShaperOversample

    public init(curve: [Float]? = nil, oversample: WaveShaperOversample = .none) {
        self.curve = curve
        self.oversample = oversample
    }
}

/// A waveshaper (cf. Web Audio's `WaveShaperNode`; graph type `waveShaper`): every sample `x`
/// of every channel becomes `curve(x)`, Web Audio's curve indexing with N = curve length:
///
/// ```
/// v = (N - 1)/2 · (x + 1),  k = floor(v),  f = v - k
/// curve(x) = curve[0] if v < 0 (and for NaN),  curve[N-1] if v ≥ N - 1,  (1-f)·curve[k] + f·curve[k+1] otherwise
/// ```
///
/// **Oversampling** (`oversample` 2x or 4x, factor L), as Web Audio specifies it: up-sample
/// by L, shape, down-sample by L. Up-sampling inserts L-1 zeros after each sample and filters
/// with `L·h`; down-sampling filters with `h` and keeps every L-th value. `h` is one low-pass,
/// scipy's `firwin(32·L + 1, 1/L, window=("kaiser", 8))`: a Kaiser-windowed sinc (β 8) with
/// cutoff at the original Nyquist, `T = 32·L + 1` taps, scaled to unit DC gain
/// (``oversamplingFilter(factor:)``). Each filter is linear-phase with a delay of `(T-1)/2`
/// high-rate frames, so with oversampling the output is **32 frames late**; with `none`
/// there is no delay.
///
/// Properties `curve` (an array of numbers, 2 or more; through `setProperty` an empty array
/// removes the curve) and `oversample` (`none`, `2x`, `4x`) may change while the graph runs
/// (the filters' history is kept). No parameters. The output
/// does not depend on slice sizes.
///
/// Thread safety: configure on a control thread; property changes reach the kernel as messages.
public final class WaveShaperNode: GraphNode, @unchecked Sendable {
    /// Taps per unit of oversampling factor (T = tapsPerFactor · L + 1).
    public static let tapsPerFactor = 32
    /// The Kaiser window's β.
    public static let kaiserBeta = 8.0
    /// The longest curve accepted.
    public static let maximumCurveLength = 1 << 22

    // MARK: Control thread only
    /// The current properties.
    public private(set) var properties: WaveShaperProperties

    public init(id: String, properties: WaveShaperProperties = WaveShaperProperties()) throws(AudioGraphError) {
        if let c = properties.curve { try Self.check(c, node: id) }
        self.properties = properties
        super.init(id: id, typeName: "waveShaper", inputBusCount: 1, outputBusCount: 1, parameters: [])
    }

    private static func check(_ curve: [Float], node: String) throws(AudioGraphError) {
        guard curve.count >= 2, curve.count <= maximumCurveLength else {
            throw .invalidProperty(node: node, name: "curve", reason: "a curve has 2 to \(maximumCurveLength) values; this one has \(curve.count)")
        }
        guard curve.allSatisfy(\.isFinite) else { throw .invalidProperty(node: node, name: "curve", reason: "values must be finite") }
    }

    /// The `waveShaper` node type: one input, one output, `properties.curve` and `oversample`
    /// (both may change while running).
    package static let descriptor = NodeTypeDescriptor(
        name: "waveShaper", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["curve", "oversample"], runtimePropertyKeys: ["curve", "oversample"],
        decode: { reader in
            var result = WaveShaperProperties()
            if let c = reader.numbers("curve", count: 2...maximumCurveLength) { result.curve = c.map { Float($0) } }
            if let o = reader.choice("oversample", as: WaveShaperOversample.self) { result.oversample = o }
            return result
        },
        typedProperty: { name, options in
            guard let p = options as? WaveShaperProperties else { return nil }
            switch name {
            case "curve": return p.curve
            case "oversample": return p.oversample
            default: return nil
            }
        },
        makeNode: { context throws(AudioGraphError) in
            try WaveShaperNode(id: context.id, properties: context.options(as: WaveShaperProperties.self) ?? WaveShaperProperties())
        })

    /// The oversampling low-pass for factor `factor` (≥ 2): `32·factor + 1` taps, unit DC gain.
    public static func oversamplingFilter(factor: Int) -> [Double] {
        let t = tapsPerFactor * factor + 1
        let m = Double(t - 1) / 2
        let cutoff = 1 / Double(factor)
        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0, k = 1.0
            while term > 1e-17 * sum {
                term *= (x / (2 * k)) * (x / (2 * k))
                sum += term
                k += 1
            }
            return sum
        }
        let i0b = besselI0(kaiserBeta)
        var h = (0..<t).map { j -> Double in
            let r = 2 * Double(j) / Double(t - 1) - 1
            let w = besselI0(kaiserBeta * (max(0, 1 - r * r)).squareRoot()) / i0b
            let x = cutoff * (Double(j) - m)
            let sinc = x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
            return w * cutoff * sinc
        }
        let sum = h.reduce(0, +)
        h = h.map { $0 / sum }
        return h
    }

    public override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        switch name {
        case "curve":
            guard let c = Self.curve(value) else { throw .invalidProperty(node: id, name: name, reason: "expected an array of numbers") }
            if !c.isEmpty { try Self.check(c, node: id) }
        case "oversample":
            guard Self.oversample(value) != nil else { throw .invalidProperty(node: id, name: name, reason: "expected none, 2x or 4x") }
        default:
            throw .invalidProperty(node: id, name: name, reason: "no such property (a waveShaper has curve and oversample)")
        }
    }

    public override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        switch name {
        case "curve": properties.curve = Self.curve(value).flatMap { $0.isEmpty ? nil : $0 }
        case "oversample": properties.oversample = Self.oversample(value) ?? properties.oversample
        default: return nil
        }
        return WaveShaperKernel.Change(curve: properties.curve, oversample: properties.oversample)
    }

    private static func curve(_ value: any Sendable) -> [Float]? {
        if let c = value as? [Float] { return c }
        if let c = value as? [Double] { return c.map { Float($0) } }
        return nil
    }

    private static func oversample(_ value: any Sendable) -> WaveShaperOversample? {
        if let o = value as? WaveShaperOversample { return o }
        if let s = value as? String { return WaveShaperOversample(rawValue: s) }
        return nil
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        WaveShaperKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// The curve as the render thread reads it (immutable once made).
final class WaveShaperCurve: @unchecked Sendable {
    let values: UnsafeMutablePointer<Float>
    let count: Int
    init(_ curve: [Float]) {
        count = curve.count
        values = .allocate(capacity: count)
        values.initialize(from: curve, count: count)
    }
    deinit { values.deallocate() }

    /// Web Audio's curve indexing.
    @inline(__always)
    func shape(_ x: Float) -> Float {
        let v = Double(count - 1) / 2 * (Double(x) + 1)
        if !(v > 0) { return values[0] }
        if v >= Double(count - 1) { return values[count - 1] }
        let k = Int(v)
        let f = Float(v - Double(k))
        return (1 - f) * values[k] + f * values[k + 1]
    }
}

/// Render side of ``WaveShaperNode``.
final class WaveShaperKernel: NodeKernel, @unchecked Sendable {
    /// A new curve or oversampling for the render thread (the old curve comes back in `retired`).
    final class Change: KernelMessage, @unchecked Sendable {
        let curve: WaveShaperCurve?
        let oversample: WaveShaperOversample
        init(curve: [Float]?, oversample: WaveShaperOversample) {
            self.curve = curve.map { WaveShaperCurve($0) }
            self.oversample = oversample
        }
    }

    /// One oversampling stage's filter and per-channel histories (mirrored rings: every window
    /// is contiguous).
    final class Oversampler {
        let factor: Int
        let taps: Int
        /// `factor · h`, per phase p: the taps h[p + factor·k], k = 0..<perPhase, reversed.
        let upTaps: UnsafeMutablePointer<Float>
        let perPhase: Int
        /// h reversed (the down-sampler's dot product runs forwards over the history).
        let downTaps: UnsafeMutablePointer<Float>
        let inputHistory: UnsafeMutablePointer<Float>   // per channel 2·perPhase
        let shapedHistory: UnsafeMutablePointer<Float>  // per channel 2·taps
        var inputPosition = 0
        var shapedPosition = 0
        let channels: Int

        init(factor: Int, channels: Int) {
            self.factor = factor
            self.channels = channels
            let h = WaveShaperNode.oversamplingFilter(factor: factor)
            taps = h.count
            perPhase = (taps + factor - 1) / factor
            upTaps = .allocate(capacity: factor * perPhase)
            upTaps.initialize(repeating: 0, count: factor * perPhase)
            for p in 0..<factor {
                for k in 0..<perPhase where p + factor * k < taps {
                    // Reversed so that index perPhase-1-k multiplies x[n - k].
                    upTaps[p * perPhase + (perPhase - 1 - k)] = Float(Double(factor) * h[p + factor * k])
                }
            }
            downTaps = .allocate(capacity: taps)
            for j in 0..<taps { downTaps[taps - 1 - j] = Float(h[j]) }
            inputHistory = .allocate(capacity: channels * 2 * perPhase)
            shapedHistory = .allocate(capacity: channels * 2 * taps)
            reset()
        }

        deinit {
            upTaps.deallocate()
            downTaps.deallocate()
            inputHistory.deallocate()
            shapedHistory.deallocate()
        }

        func reset() {
            inputHistory.initialize(repeating: 0, count: channels * 2 * perPhase)
            shapedHistory.initialize(repeating: 0, count: channels * 2 * taps)
            inputPosition = 0
            shapedPosition = 0
        }

        /// Processes one frame of `channelCount` channels in place through `curve`.
        @inline(__always)
        func process(_ y: ChannelBufferList, frame i: Int, curve: WaveShaperCurve) {
            let pp = perPhase, t = taps, l = factor
            for c in 0..<channels {
                let xh = inputHistory + c * 2 * pp, sh = shapedHistory + c * 2 * t
                let x = y.channel(c)[i]
                // The input window x[n - pp + 1 ... n], contiguous at xh + inputPosition + 1.
                xh[inputPosition] = x
                xh[inputPosition + pp] = x
                let window = xh + inputPosition + 1
                var sp = shapedPosition
                var out: Float = 0
                for p in 0..<l {
                    var u: Float = 0
                    let taps = upTaps + p * pp
                    for k in 0..<pp { u += taps[k] * window[k] }
                    let s = curve.shape(u)
                    sh[sp] = s
                    sh[sp + t] = s
                    sp = sp + 1 == t ? 0 : sp + 1
                    if p == 0 {
                        // y[n] = Σ h[j] s[L·n - j]: the t shaped values up to s[L·n], oldest first at sh + sp.
                        let sw = sh + sp
                        for j in 0..<t { out += downTaps[j] * sw[j] }
                    }
                }
                y.channel(c)[i] = out
            }
            inputPosition = inputPosition + 1 == pp ? 0 : inputPosition + 1
            shapedPosition = (shapedPosition + l) % t
        }
    }

    // MARK: Render thread only
    private var curve: WaveShaperCurve?
    private var oversample: WaveShaperOversample
    private let twice: Oversampler
    private let fourTimes: Oversampler
    private let channelCount: Int

    init(node: WaveShaperNode, maximumFramesPerSlice: Int) {
        curve = node.properties.curve.map { WaveShaperCurve($0) }
        oversample = node.properties.oversample
        channelCount = node.outputFormats[0].channelCount
        twice = Oversampler(factor: 2, channels: channelCount)
        fourTimes = Oversampler(factor: 4, channels: channelCount)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        twice.reset()
        fourTimes.reset()
    }

    override func receive(_ message: KernelMessage) {
        guard let change = message as? Change else { return }
        change.retired = curve
        curve = change.curve
        oversample = change.oversample
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        _ = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        guard let curve else {
            outputIsSilent[0] = ChannelPointers.isAllZero(out, frameCount: n)
            return
        }
        switch oversample {
        case .none:
            for c in 0..<channelCount {
                let y = out.channel(c)
                for i in 0..<n { y[i] = curve.shape(y[i]) }
            }
        case .twice:
            for i in 0..<n { twice.process(out, frame: i, curve: curve) }
        case .fourTimes:
            for i in 0..<n { fourTimes.process(out, frame: i, curve: curve) }
        }
        outputIsSilent[0] = ChannelPointers.isAllZero(out, frameCount: n)
    }
}
