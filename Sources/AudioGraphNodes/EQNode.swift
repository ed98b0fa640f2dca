// The parametric equalizer: cookbook biquad bands in series, then a global gain (cf. AUNBandEQ).

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// An equalizer effect (cf. `AVAudioUnitEQ` / AUNBandEQ): each band is one second-order section
/// with the Audio EQ Cookbook coefficients (``BiquadCoefficients``), applied in band order to
/// every channel independently, then `globalGain`.
///
/// Parameters: `globalGain` (dB, -96...24, 0; an exact per-sample gain, ramps and automation
/// included), and per band `band.N.frequency` (Hz, 10...sampleRate/2), `band.N.gain` (dB),
/// `band.N.q` (0.05...100), `band.N.bypass` (0 or 1). Band parameters do not step: a change
/// glides for 10 ms in log frequency / dB / log q with coefficients recomputed every frame, and
/// bypass crossfades over 10 ms (see ``Biquad``); both are per sample, so an offline render is
/// the same for every slice size. Per-sample values (a ramp or automation) retarget the glide
/// every frame, which makes the band follow them with a lag of a few milliseconds.
///
/// The bands' filter types come from the `bands` (or `preset`) property, fixed at creation.
/// With `smoothing` false (``EQProperties/smoothing``) nothing glides: a band change takes
/// exact coefficients from the next frame and bypass switches, as Web Audio's BiquadFilterNode.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class EQNode: GraphNode, @unchecked Sendable {
    /// The bands as configured (their values are the parameters' initial values).
    public let properties: EQProperties

    public init(id: String, sampleRate: Double, properties: EQProperties = EQProperties()) {
        self.properties = properties
        super.init(id: id, typeName: "eq", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.eq.parameterInfos(sampleRate: sampleRate, inputBusCount: 0,
                                                                 bandCount: properties.bands.count))
        for (i, band) in properties.bands.enumerated() {
            setInitial(i, "frequency", band.frequency)
            setInitial(i, "gain", band.gain)
            setInitial(i, "q", band.q)
            setInitial(i, "bypass", band.bypass ? 1 : 0)
        }
    }

    private func setInitial(_ band: Int, _ name: String, _ value: Double) {
        guard let p = parameter(at: ParameterAddress(scope: .global, element: band, group: "band", name: name)) else { return }
        try? p.setValue(min(max(value, p.info.minValue), p.info.maxValue))
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        EQKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
    }
}

/// Render side of ``EQNode``.
final class EQKernel: NodeKernel, @unchecked Sendable {
    // MARK: Fixed at creation (control thread), read by the render thread
    let bandCount: Int
    private let bandTypes: UnsafeMutablePointer<EQFilterType>
    private let bandParameterIndices: UnsafeMutablePointer<(frequency: Int, gain: Int, q: Int, bypass: Int)>
    private let globalGainIndex: Int
    let channelCount: Int

    // MARK: Render thread only (scratch sized at creation)
    /// Each band's parameter values for the current slice (read once per slice: reading advances ramps).
    private let bandValues: UnsafeMutablePointer<(frequency: ParameterValues, gain: ParameterValues, q: ParameterValues,
                                                  bypass: ParameterValues)>
    /// The cascade's copies of the bands' coefficients and state (see `Biquad.processSteadyCascade`).
    private let cascadeCoefficients: UnsafeMutablePointer<Double>
    private let cascadeState: UnsafeMutablePointer<Double>

    /// Slices this kernel ended as the last of a fused chain rendered as one cascade
    /// (``EQChain``; read by tests after rendering).
    var fusedCascadeSliceCount = 0

    // MARK: Render thread only (filter state, pointer tables)
    let filters: ContiguousArray<Biquad>
    /// Channel pointer tables for the filters (output buffers, filtered in place).
    private let pointers: ChannelPointers

    init(node: EQNode, maximumFramesPerSlice: Int) {
        let bands = node.properties.bands
        bandCount = bands.count
        let channels = node.outputFormats[0].channelCount
        let rate = node.outputFormats[0].sampleRate
        bandTypes = .allocate(capacity: max(1, bandCount))
        bandParameterIndices = .allocate(capacity: max(1, bandCount))
        var filters = ContiguousArray<Biquad>()
        for (i, band) in bands.enumerated() {
            (bandTypes + i).initialize(to: band.type)
            func index(_ name: String) -> Int {
                node.parameterIndex(of: ParameterAddress(scope: .global, element: i, group: "band", name: name))!
            }
            (bandParameterIndices + i).initialize(to: (index("frequency"), index("gain"), index("q"), index("bypass")))
            // Start settled on the parameters' current values.
            let start = EQBand(type: band.type, frequency: node.parameters[index("frequency")].value,
                               gain: node.parameters[index("gain")].value, q: node.parameters[index("q")].value,
                               bypass: node.parameters[index("bypass")].value >= 0.5)
            filters.append(Biquad(band: start, sampleRate: rate, maximumChannelCount: channels, smoothing: node.properties.smoothing))
        }
        self.filters = filters
        globalGainIndex = node.parameterIndex(of: ParameterAddress(name: "globalGain"))!
        pointers = ChannelPointers(capacity: channels)
        channelCount = channels
        Biquad.simdMetadataReady
        bandValues = .allocate(capacity: max(1, bandCount))
        let scratch = Biquad.cascadeScratchCounts(sections: bandCount, channels: channels)
        cascadeCoefficients = .allocate(capacity: scratch.coefficients)
        cascadeCoefficients.initialize(repeating: 0, count: scratch.coefficients)
        cascadeState = .allocate(capacity: scratch.state)
        cascadeState.initialize(repeating: 0, count: scratch.state)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
        chainFusing = self
    }

    deinit {
        bandTypes.deallocate()
        bandParameterIndices.deallocate()
        bandValues.deallocate()
        cascadeCoefficients.deallocate()
        cascadeState.deallocate()
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        for f in filters { f.reset() }
    }

    /// The exact (Double) value of a parameter whose slice values are constant.
    @inline(__always)
    private func constantValue(_ index: Int, _ v: ParameterValues) -> Double {
        v.isConstant ? parameterStates[index].current : Double(v.constant)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let inputSilent = ChannelPointers.loadInput(inputs.pull(0), into: out, frameCount: n)
        let steady = readBands(context)
        filterBands(out, context, steady: steady)
        applyGlobalGain(out, frameCount: n, parameterValues(globalGainIndex, context))
        // A NaN or infinity that reached a filter's memory goes no further than this slice.
        clearNonFiniteState()
        // Silent only when the input was and the filters have rung out.
        outputIsSilent[0] = inputSilent && ChannelPointers.isAllZero(out, frameCount: n)
    }

    /// Reads every band's values for the slice (reading advances ramps, so exactly once per
    /// slice) and retargets the bands whose values are constant. Returns whether every band is
    /// settled (``Biquad/isSteady``), so that the bands may run as one cascade. Real-time safe.
    @inline(__always)
    func readBands(_ context: RenderContext) -> Bool {
        var steady = true
        for b in 0..<bandCount {
            let idx = bandParameterIndices[b]
            let frequency = parameterValues(idx.frequency, context)
            let gain = parameterValues(idx.gain, context)
            let q = parameterValues(idx.q, context)
            let bypass = parameterValues(idx.bypass, context)
            (bandValues + b).initialize(to: (frequency, gain, q, bypass))
            if frequency.isConstant && gain.isConstant && q.isConstant && bypass.isConstant {
                let filter = filters[b]
                filter.setTarget(EQBand(type: bandTypes[b], frequency: constantValue(idx.frequency, frequency),
                                        gain: constantValue(idx.gain, gain), q: constantValue(idx.q, q),
                                        bypass: bypass.constant >= 0.5))
                steady = steady && filter.isSteady
            } else {
                steady = false
            }
        }
        return steady
    }

    /// Filters `out` in place through the bands, with the values ``readBands(_:)`` read for this
    /// slice (`steady`: what it returned). Real-time safe.
    @inline(__always)
    func filterBands(_ out: ChannelBufferList, _ context: RenderContext, steady: Bool) {
        let n = context.frameCount
        pointers.point(at: out)
        let ins = pointers.inputs
        let outs = pointers.outputs
        if steady && bandCount > 1 {
            // Every band settled: all bands frame by frame (the same result, several times faster).
            Biquad.processSteadyCascade(filters, channels: channelCount, buffers: outs, frameCount: n,
                                        coefficients: cascadeCoefficients, state: cascadeState)
        } else {
            for b in 0..<bandCount {
                let (frequency, gain, q, bypass) = bandValues[b]
                let filter = filters[b]
                let type = bandTypes[b]
                if frequency.isConstant && gain.isConstant && q.isConstant && bypass.isConstant {
                    filter.process(input: ins, output: outs, frameCount: n, startFrame: context.sampleTime)
                } else {
                    // Per-sample values: retarget every frame (no-ops while a value holds).
                    for i in 0..<n {
                        filter.setTarget(EQBand(type: type, frequency: Double(frequency[i]), gain: Double(gain[i]),
                                                q: Double(q[i]), bypass: bypass[i] >= 0.5))
                        pointers.point(at: out, frame: i)
                        filter.process(input: ins, output: outs, frameCount: 1, startFrame: context.sampleTime + Int64(i))
                    }
                    pointers.point(at: out)
                }
            }
        }
    }

    /// Whether `globalGain` (its values for this slice) leaves the samples as they are: constant 0 dB.
    @inline(__always)
    func isUnityGain(_ globalGain: ParameterValues) -> Bool {
        globalGain.isConstant && parameterStates[globalGainIndex].current == 0
    }

    /// Applies `globalGain` (its values for this slice: read once) to `out`. Real-time safe.
    @inline(__always)
    func applyGlobalGain(_ out: ChannelBufferList, frameCount n: Int, _ globalGain: ParameterValues) {
        let channels = out.channelCount
        if globalGain.isConstant {
            let dB = parameterStates[globalGainIndex].current
            if dB != 0 {
                let g = Float(pow(10, dB / 20))
                for c in 0..<channels {
                    let y = out.channel(c)
                    for i in 0..<n { y[i] *= g }
                }
            }
        } else {
            for i in 0..<n {
                let g = Float(pow(10, Double(globalGain[i]) / 20))
                for c in 0..<channels { out.channel(c)[i] *= g }
            }
        }
    }

    /// Clears the filter memory a NaN or infinity reached (after each slice). Real-time safe.
    @inline(__always)
    func clearNonFiniteState() {
        for b in 0..<bandCount { filters[b].clearNonFiniteState() }
    }

    /// The global gain's values for this slice (reading advances its ramp: once per slice).
    @inline(__always)
    func globalGainValues(_ context: RenderContext) -> ParameterValues {
        parameterValues(globalGainIndex, context)
    }
}

extension EQKernel: ChainFusingKernel {
    /// Another eq with as many channels at the same rate: the two filter as one cascade.
    func canFuse(after upstream: NodeKernel) -> Bool {
        guard let eq = upstream as? EQKernel, upstream.outputFormats.count == 1 else { return false }
        return eq.channelCount == channelCount && eq.outputFormats[0].sampleRate == outputFormats[0].sampleRate
            && eq.maximumFramesPerSlice == maximumFramesPerSlice
    }

    func makeFusedChain(_ chain: [NodeKernel]) -> FusedKernelChain? {
        let eqs = chain.compactMap { $0 as? EQKernel }
        guard eqs.count == chain.count, eqs.count >= 2, eqs.last === self else { return nil }
        return EQChain(eqs)
    }
}

extension EQNode {
    /// The `eq` node type: an effect with `bands` (up to ``EQProperties/maximumBandCount``, each
    /// a filter type and its band parameters' initial values) or a `preset`, fixed at creation;
    /// ``ParameterTable/eq`` with one `band.N.*` group per band.
    package static let descriptor = NodeTypeDescriptor(
        name: "eq", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["bands", "preset", "smoothing"], parameters: .eq,
        decode: { reader in
            // `smoothing: false`: Web Audio's un-smoothed band changes (see EQProperties.smoothing).
            let smoothing = reader.bool("smoothing") ?? true
            func done(_ properties: EQProperties) -> EQProperties {
                var p = properties
                p.smoothing = smoothing
                return p
            }
            if reader.has("bands"), reader.has("preset") {
                reader.reportInvalid("give either \"bands\" or \"preset\", not both")
            }
            if let preset = reader.choice("preset", as: EQPreset.self) {
                return done(EQProperties(preset: preset, sampleRate: reader.sampleRate))
            }
            guard let count = reader.count("bands") else { return done(EQProperties()) }
            if count > EQProperties.maximumBandCount {
                reader.reportInvalid("bands", "an eq has at most \(EQProperties.maximumBandCount) bands, found \(count)")
            }
            var bands: [EQBand] = []
            for index in 0..<min(count, EQProperties.maximumBandCount) {
                var band = EQBand(type: .peak)
                guard let object = reader.element("bands", index, allowed: ["type", "frequency", "gain", "q", "bypass"],
                                                  required: ["type"]) else {
                    bands.append(band)
                    continue
                }
                if let type = object.choice("type", as: EQFilterType.self) { band = EQBand(type: type) }
                func check(_ key: String) -> Double? {
                    guard object.has(key),
                          let info = ParameterTable.eq.parameterInfo(for: ParameterAddress(scope: .global, element: index, group: "band", name: key),
                                                                     sampleRate: reader.sampleRate, inputBusCount: 1, bandCount: index + 1)
                    else { return nil }
                    return object.parameterValue(key, info)
                }
                if let frequency = check("frequency") { band.frequency = frequency } else if !object.has("frequency") {
                    band.frequency = min(1000, reader.sampleRate / 2)
                }
                if let gain = check("gain") { band.gain = gain }
                if let q = check("q") { band.q = q }
                if object.has("bypass") {
                    if object.isNumber("bypass") {
                        if let bypass = check("bypass") { band.bypass = bypass == 1 }
                    } else if let bypass = object.bool("bypass") {
                        band.bypass = bypass
                    }
                }
                bands.append(band)
            }
            return done(EQProperties(bands: bands))
        },
        bandCount: { options in (options as? EQProperties)?.bands.count ?? 0 },
        parameterDefaults: { options in
            guard let eq = options as? EQProperties else { return [:] }
            var defaults: [ParameterAddress: Double] = [:]
            for (index, band) in eq.bands.enumerated() {
                func set(_ name: String, _ value: Double) {
                    defaults[ParameterAddress(scope: .global, element: index, group: "band", name: name)] = value
                }
                set("frequency", band.frequency)
                set("gain", band.gain)
                set("q", band.q)
                set("bypass", band.bypass ? 1 : 0)
            }
            return defaults
        },
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            EQNode(id: context.id, sampleRate: context.sampleRate, properties: context.options(as: EQProperties.self) ?? EQProperties())
        })
}
