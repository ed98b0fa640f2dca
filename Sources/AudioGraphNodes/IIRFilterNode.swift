// Web Audio's IIRFilterNode: a general IIR filter from feedforward/feedback coefficients, with its frequency response.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A general IIR filter (Web Audio's `IIRFilterNode`,
/// https://www.w3.org/TR/webaudio/#IIRFilterNode): per channel
/// `Σ_{m=0}^{M} a_m·y[n−m] = Σ_{k=0}^{K} b_k·x[n−k]` with `b` = `feedforward` and `a` = `feedback`,
/// i.e. `H(z) = Σ b_k z^−k / Σ a_m z^−m` (what `scipy.signal.lfilter(b, a, x)` computes: the
/// coefficients are divided by `a_0`). The recurrence runs in Double (direct form I), from the
/// all-zero state at the node's start; the output is rounded to Float. The output has the
/// input's channels. A non-finite value reaching the state clears it (the slice's output keeps
/// what was computed), so one NaN does not silence the filter for good.
///
/// No parameters (the coefficients are fixed at creation, as in Web Audio).
///
/// Thread safety: configure on a control thread; ``frequencyResponse(frequencies:sampleRate:)``
/// may be called from any thread (it reads immutable coefficients).
public final class IIRFilterNode: GraphNode, @unchecked Sendable {
    /// `properties` of an `iirFilter` node: the coefficients as the spec takes them.
    public struct Options: Hashable, Sendable {
        /// `b_0 ... b_K`: 1...20 values, not all zero.
        public var feedforward: [Double]
        /// `a_0 ... a_M`: 1...20 values, `a_0` not zero.
        public var feedback: [Double]
        public init(feedforward: [Double] = [1], feedback: [Double] = [1]) {
            self.feedforward = feedforward
            self.feedback = feedback
        }

        /// Why the coefficients are not a filter the spec accepts, or nil when they are.
        public var problem: String? {
            if !(1...IIRFilterNode.maximumOrder + 1).contains(feedforward.count) { return "feedforward has 1...20 coefficients, found \(feedforward.count)" }
            if !(1...IIRFilterNode.maximumOrder + 1).contains(feedback.count) { return "feedback has 1...20 coefficients, found \(feedback.count)" }
            if !(feedforward + feedback).allSatisfy(\.isFinite) { return "the coefficients must be finite" }
            if feedforward.allSatisfy({ $0 == 0 }) { return "the feedforward coefficients are all 0" }
            if feedback[0] == 0 { return "the first feedback coefficient is 0" }
            return nil
        }
    }

    /// The spec's largest order: 20 coefficients on each side.
    public static let maximumOrder = 19

    /// The coefficients.
    public let options: Options

    /// A filter with `options` (refused when ``Options/problem`` says so).
    public init(id: String, options: Options) throws(AudioGraphError) {
        if let problem = options.problem { throw .invalidProperty(node: id, name: "feedforward/feedback", reason: problem) }
        self.options = options
        super.init(id: id, typeName: "iirFilter", inputBusCount: 1, outputBusCount: 1, parameters: [])
    }

    /// The `iirFilter` node type: one input, one output, properties `feedforward` and `feedback`
    /// (both required), no parameters.
    package static let descriptor = NodeTypeDescriptor(
        name: "iirFilter", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["feedforward", "feedback"],
        decode: { reader in
            var o = Options()
            let b = reader.numbers("feedforward", count: 1...maximumOrder + 1)
            let a = reader.numbers("feedback", count: 1...maximumOrder + 1)
            if !reader.has("feedforward") { reader.reportMissing("feedforward") }
            if !reader.has("feedback") { reader.reportMissing("feedback") }
            if let b {
                if b.allSatisfy({ $0 == 0 }) { reader.reportInvalid("feedforward", "the feedforward coefficients are all 0") } else { o.feedforward = b }
            }
            if let a {
                if a[0] == 0 { reader.reportInvalid("feedback", "the first feedback coefficient is 0") } else { o.feedback = a }
            }
            return o
        },
        makeNode: { context throws(AudioGraphError) -> GraphNode in try IIRFilterNode(id: context.id, options: context.options(as: Options.self) ?? Options()) })

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        IIRFilterKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    /// The filter's response at each of `frequencies` (Hz) for a node running at `sampleRate`
    /// (Web Audio's `getFrequencyResponse`): `H(e^{jω})`, `ω = 2π·f/sampleRate`, as magnitude
    /// (linear) and phase (radians, -π...π). A frequency outside 0...sampleRate/2 gives NaN for
    /// both, as the spec says. Computed in Double from the coefficients as given.
    public func frequencyResponse(frequencies: [Double], sampleRate: Double) -> (magnitude: [Double], phase: [Double]) {
        Self.frequencyResponse(options, frequencies: frequencies, sampleRate: sampleRate)
    }

    /// ``frequencyResponse(frequencies:sampleRate:)`` of coefficients `options`.
    public static func frequencyResponse(_ options: Options, frequencies: [Double], sampleRate: Double) -> (magnitude: [Double], phase: [Double]) {
        var magnitude: [Double] = [], phase: [Double] = []
        magnitude.reserveCapacity(frequencies.count)
        phase.reserveCapacity(frequencies.count)
        for f in frequencies {
            guard f >= 0, f <= sampleRate / 2 else {
                magnitude.append(.nan)
                phase.append(.nan)
                continue
            }
            let w = 2 * Double.pi * f / sampleRate
            func evaluate(_ c: [Double]) -> (re: Double, im: Double) {
                var re = 0.0, im = 0.0
                for (k, x) in c.enumerated() {
                    re += x * cos(Double(k) * w)
                    im -= x * sin(Double(k) * w)
                }
                return (re, im)
            }
            let n = evaluate(options.feedforward), d = evaluate(options.feedback)
            let dd = d.re * d.re + d.im * d.im
            let re = (n.re * d.re + n.im * d.im) / dd
            let im = (n.im * d.re - n.re * d.im) / dd
            magnitude.append((re * re + im * im).squareRoot())
            phase.append(atan2(im, re))
        }
        return (magnitude, phase)
    }
}

/// Render side of ``IIRFilterNode``: direct form I per channel, in Double.
final class IIRFilterKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation
    /// `b_k / a_0`, k = 0...K, and `a_m / a_0`, m = 1...M (index 0 unused).
    private let b: UnsafeMutablePointer<Double>
    private let a: UnsafeMutablePointer<Double>
    private let bCount: Int
    private let aCount: Int
    /// History length per channel: max(K, M), as a ring of the last inputs and outputs.
    private let order: Int
    private let channelCount: Int

    // MARK: Render thread only
    /// Per channel `order` past inputs and `order` past outputs, in rings of length `ringLength`.
    private let xHistory: UnsafeMutablePointer<Double>
    private let yHistory: UnsafeMutablePointer<Double>
    private let ringLength: Int
    private var position = 0

    init(node: IIRFilterNode, maximumFramesPerSlice: Int) {
        let o = node.options
        let a0 = o.feedback[0]
        bCount = o.feedforward.count
        aCount = o.feedback.count
        b = .allocate(capacity: bCount)
        a = .allocate(capacity: aCount)
        for k in 0..<bCount { b[k] = o.feedforward[k] / a0 }
        a[0] = 1
        for m in 1..<max(1, aCount) { a[m] = o.feedback[m] / a0 }
        order = max(bCount, aCount) - 1
        ringLength = max(1, order)
        channelCount = node.outputFormats[0].channelCount
        xHistory = .allocate(capacity: ringLength * max(1, channelCount))
        yHistory = .allocate(capacity: ringLength * max(1, channelCount))
        xHistory.initialize(repeating: 0, count: ringLength * max(1, channelCount))
        yHistory.initialize(repeating: 0, count: ringLength * max(1, channelCount))
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        b.deallocate()
        a.deallocate()
        xHistory.deallocate()
        yHistory.deallocate()
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        clearState()
    }

    private func clearState() {
        xHistory.update(repeating: 0, count: ringLength * max(1, channelCount))
        yHistory.update(repeating: 0, count: ringLength * max(1, channelCount))
        position = 0
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        // A silent input still runs the recurrence (the tail rings on): the output is then the
        // same however the silence is sliced.
        ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        let order = self.order, ring = ringLength, bCount = self.bCount, aCount = self.aCount
        var finalPosition = position
        var allZero = true
        var finite = true
        for c in 0..<min(channelCount, out.channelCount) {
            let y = out.channel(c)
            let xh = xHistory + c * ring, yh = yHistory + c * ring
            var p = position   // slot of the most recent sample (x[n-1], y[n-1])
            for i in 0..<n {
                let x = Double(y[i])
                var acc = b[0] * x
                // x[n-k] and y[n-m] for k, m = 1...order: slot (p - k + 1) mod ring.
                var slot = p
                for k in 1..<max(1, order + 1) where order > 0 {
                    if k < bCount { acc += b[k] * xh[slot] }
                    if k < aCount { acc -= a[k] * yh[slot] }
                    slot = slot == 0 ? ring - 1 : slot - 1
                }
                if order > 0 {
                    p = p + 1 == ring ? 0 : p + 1
                    xh[p] = x
                    yh[p] = acc
                }
                let v = Float(acc)
                y[i] = v
                if v != 0 { allZero = false }
            }
            if order > 0 {
                for k in 0..<ring where !yh[k].isFinite || !xh[k].isFinite { finite = false }
            }
            finalPosition = p
        }
        position = finalPosition
        if !finite { clearState() }
        outputIsSilent[0] = allZero
    }
}
