// A signal generator source: sine, band-limited square/sawtooth/triangle, seeded white noise.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A source node generating a waveform (cf. Web Audio's OscillatorNode, plus noise).
///
/// Parameters: `frequency` (Hz, 0...sampleRate/2, 440), `amplitude` (0...1, 1) and `detune`
/// (cents, ±153600, 0), all a-rate; the oscillator runs at Web Audio's computed frequency
/// `frequency · 2^(detune/1200)` (at most sampleRate/2). Waveform `custom` plays a
/// ``PeriodicWave`` from the `real`/`imag` properties (Web Audio's PeriodicWave: peak-normalized
/// unless `disableNormalization`, band-limited).
/// Sine is `amplitude * sin(2*pi*phase)` with the phase accumulated in Double from the node's
/// start frame (so a constant frequency gives `sin(2*pi*f*n/sampleRate)`); the sine is a
/// polynomial within 7e-16 of libm's (see `OscillatorKernel.sine(ofPhases:)`). Square, sawtooth and
/// triangle are band-limited: sums of their Fourier series up to the Nyquist frequency (at most
/// 512 harmonics), so nothing aliases. Noise is uniform white in [-amplitude, amplitude] from a
/// seeded generator (the same `seed` gives the same samples). Every channel carries the same value.
/// The node is silent before `startTime` and from `stopTime` on (seconds on the graph timeline,
/// counted from the frame the node was added).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class OscillatorNode: GraphNode, @unchecked Sendable {
    /// The configuration (waveform, startTime and stopTime may change while running).
    public private(set) var properties: OscillatorProperties
    private let sampleRate: Double

    public init(id: String, sampleRate: Double, properties: OscillatorProperties = OscillatorProperties()) {
        self.properties = properties
        self.sampleRate = sampleRate
        super.init(id: id, typeName: "oscillator", inputBusCount: 0, outputBusCount: 1,
                   parameters: ParameterTable.oscillator.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0),
                   declaredFormat: PartialStreamFormat(sampleRate: sampleRate, channelCount: properties.channels))
    }

    /// The `oscillator` node type: a source, `properties` ``OscillatorProperties`` (waveform,
    /// startTime and stopTime may change while the graph runs), ``ParameterTable/oscillator``.
    package static let descriptor = NodeTypeDescriptor(
        name: "oscillator", kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["waveform", "channels", "seed", "startTime", "stopTime", "real", "imag", "disableNormalization"],
        runtimePropertyKeys: ["waveform", "startTime", "stopTime"], parameters: .oscillator,
        decode: { reader in
            var result = OscillatorProperties()
            if let waveform = reader.choice("waveform", as: Waveform.self) { result.waveform = waveform }
            if let channels = reader.integer("channels", in: 1...FormatDescription.maximumChannelCount) { result.channels = channels }
            if let seed = reader.integer("seed", in: 0...9_007_199_254_740_991) { result.seed = UInt64(seed) }
            if let time = reader.time("startTime") { result.startTime = time }
            if let time = reader.time("stopTime") {
                if time <= result.startTime {
                    reader.reportInvalid("stopTime", "stopTime \(ParameterInfo.format(time)) must be after startTime \(ParameterInfo.format(result.startTime))")
                } else {
                    result.stopTime = time
                }
            }
            let terms = 1...PeriodicWave.maximumTermCount
            let real = reader.numbers("real", count: terms), imag = reader.numbers("imag", count: terms)
            if let flag = reader.bool("disableNormalization") { result.disableNormalization = flag }
            if reader.has("real") || reader.has("imag") {
                if reader.has("waveform") && result.waveform != .custom {
                    reader.reportInvalid("waveform", "real and imag make a custom waveform: write \"custom\" or leave waveform out")
                }
                result.waveform = .custom
                if let problem = PeriodicWave.problem(real: real, imag: imag) {
                    reader.reportInvalid(reader.has("real") ? "real" : "imag", problem)
                } else {
                    result.real = real
                    result.imag = imag
                }
            }
            return result
        },
        typedProperty: { name, options in
            guard let p = options as? OscillatorProperties else { return nil }
            switch name {
            case "waveform": return p.waveform
            case "startTime": return p.startTime
            case "stopTime": return p.stopTime
            default: return nil
            }
        },
        checkFormat: { options, context in
            guard let p = options as? OscillatorProperties else { return }
            context.checkDeclaredChannels(property: p.channels, propertyGiven: context.isGiven("channels"), what: "the property channels")
        },
        makeNode: { context in
            OscillatorNode(id: context.id, sampleRate: context.sampleRate,
                           properties: context.options(as: OscillatorProperties.self) ?? OscillatorProperties())
        })

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        // A graph file's `format.channels` is declared over the property's count (see GraphAssembly.makeNode).
        [.canonical(sampleRate: declaredFormat.sampleRate ?? graphSampleRate, channelCount: declaredFormat.channelCount ?? properties.channels)]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        OscillatorKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    public override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        switch name {
        case "waveform":
            guard value is Waveform || (value as? String).flatMap(Waveform.init(rawValue:)) != nil else {
                throw .invalidProperty(node: id, name: name, reason: "expected one of " + Waveform.allCases.map(\.rawValue).joined(separator: ", "))
            }
        case "startTime":
            guard let v = PropertyValue.double(value), v >= 0, v.isFinite else {
                throw .invalidProperty(node: id, name: name, reason: "expected a time in seconds >= 0")
            }
        case "stopTime":
            guard let v = PropertyValue.optionalDouble(value) else { throw .invalidProperty(node: id, name: name, reason: "expected a time in seconds or null") }
            if let v, !(v >= 0 && v.isFinite) { throw .invalidProperty(node: id, name: name, reason: "expected a time in seconds >= 0") }
        case "channels", "seed":
            guard kernel == nil else {
                throw .invalidProperty(node: id, name: name, reason: "cannot be changed once the node is set up (only waveform, startTime and stopTime can)")
            }
            guard let v = PropertyValue.int(value), v >= 0 else { throw .invalidProperty(node: id, name: name, reason: "expected an integer") }
        default:
            throw .invalidProperty(node: id, name: name, reason: "no such property")
        }
    }

    public override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        switch name {
        case "waveform": properties.waveform = (value as? Waveform) ?? Waveform(rawValue: value as! String)!
        case "startTime": properties.startTime = PropertyValue.double(value)!
        case "stopTime": properties.stopTime = PropertyValue.optionalDouble(value)!
        case "channels":
            properties.channels = PropertyValue.int(value)!
            declaredFormat.channelCount = properties.channels
        case "seed": properties.seed = UInt64(PropertyValue.int(value)!)
        default: return nil
        }
        let rate = outputFormats.first?.sampleRate ?? sampleRate
        return OscillatorKernel.Settings(waveform: properties.waveform,
                                         startOffset: FrameCount.frames(seconds: properties.startTime, sampleRate: rate),
                                         stopOffset: properties.stopTime.map { FrameCount.frames(seconds: $0, sampleRate: rate) })
    }
}

/// Render side of ``OscillatorNode``. Render thread only after creation.
final class OscillatorKernel: NodeKernel, @unchecked Sendable {
    /// A waveform or start/stop change for a running oscillator.
    final class Settings: KernelMessage, @unchecked Sendable {
        let waveform: Waveform
        let startOffset: Int64
        let stopOffset: Int64?
        init(waveform: Waveform, startOffset: Int64, stopOffset: Int64?) {
            self.waveform = waveform
            self.startOffset = startOffset
            self.stopOffset = stopOffset
        }
    }

    private let rate: Double
    private let seed: UInt64
    private let frequencyIndex: Int
    private let amplitudeIndex: Int
    private let detuneIndex: Int
    /// The custom waveform (the properties' terms, else Web Audio's default sine), made here on
    /// the control thread so that a switch to `custom` while running allocates nothing.
    private let periodicWave: PeriodicWave
    /// Taken here so that its tables are built on the control thread, not while rendering.
    private let series = BandLimitedSeries.shared

    // MARK: Render thread only
    private var waveform: Waveform
    private var startOffset: Int64
    private var stopOffset: Int64?
    private var phase: Double = 0
    private var framesRendered: Int64 = 0
    /// The sample time the phase is at (the frame after the last one rendered).
    private var phaseTime: Int64 = 0
    private var rng: SplitMix64
    /// Per slice: each frame's phase and frequency (0 where silent), so that the band-limited
    /// waves can be evaluated two frames at a time. Sized at init, freed in deinit.
    private let framePhases: UnsafeMutablePointer<Double>
    private let frameFrequencies: UnsafeMutablePointer<Double>
    /// Per slice: the computed (detuned) frequency of each frame.
    private let frameScratch: UnsafeMutablePointer<Float>

    init(node: OscillatorNode, maximumFramesPerSlice: Int) {
        let p = node.properties
        waveform = p.waveform
        let rate = node.outputFormats[0].sampleRate
        self.rate = rate
        startOffset = FrameCount.frames(seconds: p.startTime, sampleRate: rate)
        stopOffset = p.stopTime.map { FrameCount.frames(seconds: $0, sampleRate: rate) }
        seed = p.seed
        rng = SplitMix64(seed: p.seed)
        frequencyIndex = node.parameterIndex(of: ParameterAddress(name: "frequency"))!
        amplitudeIndex = node.parameterIndex(of: ParameterAddress(name: "amplitude"))!
        detuneIndex = node.parameterIndex(of: ParameterAddress(name: "detune"))!
        periodicWave = PeriodicWave(real: p.real, imag: p.imag, disableNormalization: p.disableNormalization)
        framePhases = .allocate(capacity: max(1, maximumFramesPerSlice))
        frameFrequencies = .allocate(capacity: max(1, maximumFramesPerSlice))
        frameScratch = .allocate(capacity: max(1, maximumFramesPerSlice))
        frameScratch.initialize(repeating: 0, count: max(1, maximumFramesPerSlice))
        Self.simdMetadataReady
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        framePhases.deallocate()
        frameFrequencies.deallocate()
        frameScratch.deallocate()
    }

    override func receive(_ message: KernelMessage) {
        guard let s = message as? Settings else { return }
        waveform = s.waveform
        startOffset = s.startOffset
        stopOffset = s.stopOffset
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        phase = 0
        framesRendered = 0
        phaseTime = sampleTime
        rng = SplitMix64(seed: seed)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let nominal = parameterValues(frequencyIndex, context)
        let amplitude = parameterValues(amplitudeIndex, context)
        let detune = parameterValues(detuneIndex, context)
        // Web Audio's computed frequency: frequency · 2^(detune/1200). Without detune (constant
        // 0) the frequency's values are used as they are, so outputs stay what they were.
        let frequency: ParameterValues
        if detune.isConstant && parameterStates[detuneIndex].current == 0 {
            frequency = nominal
        } else {
            frequency = computedFrequency(nominal, detune, frameCount: context.frameCount)
        }
        let out = outputs[0]
        let first = out.channel(0)
        let begin = startSampleTime + startOffset
        let end = stopOffset.map { startSampleTime + $0 } ?? Int64.max
        let t0 = context.sampleTime
        if t0 + Int64(n) <= begin || t0 >= end {
            outputSilence(frameCount: n)
            return
        }
        let inverseRate = 1.0 / rate
        // Slices this oscillator was not pulled for (it was disconnected) still move its phase:
        // it keeps its own timeline, at the frequency it has now.
        let sounding = max(begin, phaseTime)
        if t0 > sounding && waveform != .noise {
            phase += Double(t0 - sounding) * Double(frequency[0]) * inverseRate
            phase -= phase.rounded(.down)
        }
        phaseTime = t0 + Int64(n)
        switch waveform {
        case .square, .sawtooth, .triangle:
            renderBandLimited(into: first, frameCount: n, firstFrame: t0, begin: begin, end: end,
                              frequency: frequency, amplitude: amplitude, inverseRate: inverseRate)
        case .sine where frequency.isConstant && amplitude.isConstant && t0 >= begin && t0 + Int64(n) <= end:
            // The common case with every per-sample decision hoisted (the same arithmetic as below).
            // The phases first (the sequential part), then the sines four frames at a time.
            let a = Double(amplitude.constant)
            let step = constantFrequency(frequency) * inverseRate
            var p = phase
            for i in 0..<n {
                framePhases[i] = p
                p += step
                if p >= 1 { p -= p.rounded(.down) }
            }
            phase = p
            var i = 0
            while i + 4 <= n {
                let s = Self.sine(ofPhases: UnsafeRawPointer(framePhases + i).loadUnaligned(as: SIMD4<Double>.self)) * a
                first[i] = Float(s[0]); first[i + 1] = Float(s[1]); first[i + 2] = Float(s[2]); first[i + 3] = Float(s[3])
                i += 4
            }
            while i < n {
                first[i] = Float(a * Self.sine(ofPhase: framePhases[i]))
                i += 1
            }
            framesRendered += Int64(n)
        case .custom:
            for i in 0..<n {
                let t = t0 + Int64(i)
                if t < begin || t >= end {
                    first[i] = 0
                    continue
                }
                let f = frequency.isConstant ? constantFrequency(frequency) : Double(frequency[i])
                first[i] = Float(Double(amplitude[i]) * periodicWave.value(phase: phase, frequency: f, sampleRate: rate))
                phase += f * inverseRate
                if phase >= 1 { phase -= phase.rounded(.down) }
                framesRendered += 1
            }
        case .sine, .noise:
            for i in 0..<n {
                let t = t0 + Int64(i)
                if t < begin || t >= end {
                    first[i] = 0
                    continue
                }
                let a = Double(amplitude[i])
                if waveform == .noise {
                    first[i] = Float(a * rng.nextSignedUnit())
                } else {
                    let f = frequency.isConstant ? constantFrequency(frequency) : Double(frequency[i])  // a constant frequency keeps its Double value
                    first[i] = Float(a * Self.sine(ofPhase: phase))
                    phase += f * inverseRate
                    if phase >= 1 { phase -= phase.rounded(.down) }
                }
                framesRendered += 1
            }
        }
        for c in 1..<max(1, out.channelCount) { out.channel(c).update(from: first, count: n) }
        outputIsSilent[0] = false
    }

    /// The exact frequency of a slice whose computed frequency is constant: the parameter's Double
    /// value without detune, else the value ``computedFrequency(_:_:frameCount:)`` put in
    /// `frequency.constant` (computed in Double, held as Float as every parameter value is).
    @inline(__always)
    private func constantFrequency(_ frequency: ParameterValues) -> Double {
        let d = parameterStates[detuneIndex].current
        if d == 0 { return parameterStates[frequencyIndex].current }
        return min(parameterStates[frequencyIndex].current * exp2(d / 1200), rate / 2)
    }

    /// `frequency · 2^(detune/1200)` (clamped to 0...sampleRate/2) per frame into the detune
    /// parameter's scratch values, or a constant when both are. Real-time safe.
    @inline(__always)
    private func computedFrequency(_ frequency: ParameterValues, _ detune: ParameterValues, frameCount n: Int) -> ParameterValues {
        if frequency.isConstant && detune.isConstant {
            return ParameterValues(constant: Float(constantFrequency(frequency)), values: nil)
        }
        let out = frameScratch
        let nyquist = rate / 2
        for i in 0..<n {
            let f = frequency.isConstant ? parameterStates[frequencyIndex].current : Double(frequency[i])
            let d = detune.isConstant ? parameterStates[detuneIndex].current : Double(detune[i])
            out[i] = Float(min(max(f * exp2(d / 1200), 0), nyquist))
        }
        return ParameterValues(constant: out[max(0, n - 1)], values: out)
    }

    /// 1.5 * 2^52: `(p + m) - m` rounds `p` (|p| < 2^51) to the nearest integer, ties to even.
    private static let roundingMagic = SIMD4<Double>(repeating: 6_755_399_441_055_744.0)

    /// `sin(2π·p)` of four phases (in cycles, any |p| < 2^51), every lane computed alike: the
    /// phase is reduced to `q` in [-0.5, 0.5] (exact), folded to `r` in [-0.25, 0.25] (exact:
    /// `sin(2π·q) = sin(2π·(±0.5 - q))`), and `sin(2π·r)` is its Taylor series to x^19, whose
    /// truncation error on [-π/2, π/2] (below 3e-16) is under Double's rounding. Against libm's
    /// `sin(2π·p)` on a grid of 500 000 phases: within 7e-16, and a few samples round to
    /// the neighbouring Float (`OscillatorNodeTests.testSineMatchesLibmSine`). Several times faster
    /// than libm's `sin`. Real-time safe.
    @inline(__always)
    static func sine(ofPhases p: SIMD4<Double>) -> SIMD4<Double> {
        let q = p - ((p + roundingMagic) - roundingMagic)
        var r = q
        r.replace(with: 0.5 - q, where: q .> 0.25)
        r.replace(with: -0.5 - q, where: q .< -0.25)
        let x = r * (2 * Double.pi)
        let x2 = x * x
        var s = SIMD4<Double>(repeating: -1.0 / 121_645_100_408_832_000)
        s = s * x2 + 1.0 / 355_687_428_096_000
        s = s * x2 - 1.0 / 1_307_674_368_000
        s = s * x2 + 1.0 / 6_227_020_800
        s = s * x2 - 1.0 / 39_916_800
        s = s * x2 + 1.0 / 362_880
        s = s * x2 - 1.0 / 5040
        s = s * x2 + 1.0 / 120
        s = s * x2 - 1.0 / 6
        return x + x * x2 * s
    }

    /// Evaluates the sine once, once per process: in debug builds the SIMD operations are
    /// unspecialised generic calls whose first use builds the SIMD types' runtime metadata (an
    /// allocation and a lock inside the Swift runtime); the initialiser reads this so that it
    /// happens on a control thread, never the render thread.
    static let simdMetadataReady: Void = {
        _ = sine(ofPhase: 0.25)
    }()

    /// `sin(2π·p)` of one phase: lane 0 of ``sine(ofPhases:)`` (so both give the same bits).
    @inline(__always)
    static func sine(ofPhase p: Double) -> Double {
        sine(ofPhases: SIMD4(repeating: p))[0]
    }

    /// The square/sawtooth/triangle frames of one slice: the phases first (the sequential part),
    /// then the waves two frames at a time. Each frame's value does not depend on its partner, so
    /// the output is the same for any slicing. Real-time safe.
    @inline(__always)
    private func renderBandLimited(into first: UnsafeMutablePointer<Float>, frameCount n: Int, firstFrame t0: Int64,
                                   begin: Int64, end: Int64, frequency: ParameterValues, amplitude: ParameterValues,
                                   inverseRate: Double) {
        for i in 0..<n {
            let t = t0 + Int64(i)
            if t < begin || t >= end {
                framePhases[i] = 0
                frameFrequencies[i] = 0
                continue
            }
            let f = frequency.isConstant ? constantFrequency(frequency) : Double(frequency[i])  // a constant frequency keeps its Double value
            framePhases[i] = phase
            frameFrequencies[i] = f
            phase += f * inverseRate
            if phase >= 1 { phase -= phase.rounded(.down) }
            framesRendered += 1
        }
        var i = 0
        while i < n {
            let j = min(i + 1, n - 1)
            let (x, y) = series.valuePair(waveform, (framePhases[i], frameFrequencies[i]), (framePhases[j], frameFrequencies[j]),
                                          sampleRate: rate)
            let t = t0 + Int64(i)
            first[i] = t < begin || t >= end ? 0 : Float(Double(amplitude[i]) * x)
            if j > i { first[j] = t + 1 < begin || t + 1 >= end ? 0 : Float(Double(amplitude[j]) * y) }
            i += 2
        }
    }
}

/// A small, fast, seedable generator (SplitMix64); real-time safe.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    @inline(__always)
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [-1, 1].
    @inline(__always)
    mutating func nextSignedUnit() -> Double {
        Double(next() >> 11) * (2.0 / Double(1 << 53)) - 1.0
    }
}
