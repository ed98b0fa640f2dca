// The 3D environment: N inputs placed around a listener, rendered to stereo (cf. AVAudioEnvironmentNode).

/// Places `inputBusCount` sources around a listener and renders them to one stereo output
/// (cf. AVAudioEnvironmentNode, with the Web Audio PannerNode's formulas).
///
/// Per input, every frame (a-rate parameters, per-sample state, so the output does not depend on
/// the slice size):
/// 1. the input is down-mixed to mono (Web Audio "speakers" rules, or "discrete"), except that a
///    stereo input in `equalPower` mode keeps its two channels for the direct path (its reverb
///    send is the mono down-mix);
/// 2. the direct path goes through the ``OcclusionFilter`` of occlusion + obstruction dB (one per
///    channel), the reverb send through that of the occlusion alone (obstruction muffles only
///    the direct sound);
/// 3. both are scaled by `gain · distanceGain(d) · coneGain` (``DistanceModel/gain(distance:)``,
///    the PannerNode distance models, d = |source - listener|; ``WebAudioPanning/coneGain(sourcePosition:orientation:listenerPosition:coneInnerAngle:coneOuterAngle:coneOuterGain:)``,
///    the PannerNode sound cone), the send also by `reverbBlend` (the direct sound is not
///    reduced by the blend);
/// 4. `equalPower`: the direct signal is panned with the PannerNode's azimuth and equal-power
///    law (``WebAudioPanning``: mono gains, or the stereo matrix for a stereo input), the
///    listener's frame being its forward/up vectors turned by yaw, pitch, roll
///    (``ListenerOrientation/axes(forward:up:)``);
///    `hrtf`: it is convolved with the nearest measured HRTF of its listener-relative direction
///    (``HRTFConvolver``: 128 frames of latency, crossfaded motion);
/// 5. the sum of the sends, when `reverb.enabled`, goes through the shared ``Reverb`` (preset,
///    level in dB), then through `reverb.filter` when one is set (a ``Biquad`` on both output
///    channels; changes glide over 10 ms), and is added to the output.
///
/// Inputs at another sample rate are converted to the environment's rate (libsamplerate, best
/// quality); any channel count is accepted. The output is stereo (property `channels` must be 2).
///
/// Parameters: `listener.x|y|z` (m), `listener.yaw|pitch|roll` (degrees),
/// `listener.forwardX|Y|Z` (0, 0, -1) and `listener.upX|Y|Z` (0, 1, 0), `input.N.x|y|z` (m),
/// `input.N.gain` 0...4, `input.N.occlusion` and `input.N.obstruction` (dB, -100...0),
/// `input.N.reverbBlend` 0...1, `input.N.orientationX|Y|Z` (1, 0, 0),
/// `input.N.coneInnerAngle` and `input.N.coneOuterAngle` (degrees, 0...360, 360),
/// `input.N.coneOuterGain` 0...1 (0), `input.N.mode` (read per slice: how this input is
/// rendered, ``InputMode``; 0 = the node's `renderingAlgorithm`), `input.N.rate` (0.5...2, 1:
/// the input played faster or slower, pitch following, through a ``VariableRateInputAdapter``,
/// when `variableRate` is on; an input fed by a live source stays at 1). Properties:
/// `distanceModel` and `reverb` (also while running), `renderingAlgorithm`, `hrtf` and
/// `variableRate` (before initialize).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread; the HRTF
/// set is loaded (file I/O, FFT planning) at initialize on the control thread.
public final class EnvironmentNode: GraphNode, @unchecked Sendable {
    /// How one input is rendered: the values of its `input.N.mode` parameter. Sources on
    /// different modes share one environment (its distance model, listener and reverb).
    public enum InputMode: Int, Sendable, CaseIterable {
        /// The node's `renderingAlgorithm` (the default).
        case nodeAlgorithm = 0
        /// Equal-power panning (a stereo input keeps its channels: the PannerNode's stereo law).
        case equalPower = 1
        /// HRTF (the input down-mixed to mono); equal power in a node made without HRTF
        /// (`renderingAlgorithm` equalPower: the node has no HRTF set).
        case hrtf = 2
        /// No spatial rendering: the input up/down-mixed to stereo ("speakers" rules) times
        /// `gain`; no distance, cone, occlusion, obstruction or reverb (AVAudio3DMixingSourceMode.bypass).
        case bypass = 3
        /// A point source with equal-power panning: every channel down-mixed to mono first.
        case pointSource = 4
        /// A mono input as ``pointSource``, any other as ``bypass`` (spatializeIfMono, speakers).
        case spatializeIfMonoEqualPower = 5
        /// A mono input as ``hrtf``, any other as ``bypass`` (spatializeIfMono, headphones).
        case spatializeIfMonoHRTF = 6
    }

    // MARK: Control thread only
    /// The properties as last applied.
    public private(set) var properties: EnvironmentProperties

    /// Makes an environment with `inputBusCount` inputs. A `channels` property other than 2 is
    /// rejected when formats are resolved (initialize); a missing or unreadable HRTF file when
    /// the kernel is made (initialize, `AudioGraphError.nodeSetupFailed`).
    public init(id: String, sampleRate: Double, inputBusCount: Int = 1,
                properties: EnvironmentProperties = EnvironmentProperties()) {
        self.properties = properties
        super.init(id: id, typeName: "environment", inputBusCount: inputBusCount, outputBusCount: 1,
                   parameters: ParameterTable.environment.parameterInfos(sampleRate: sampleRate, inputBusCount: inputBusCount,
                                                                            bandCount: 0),
                   declaredFormat: PartialStreamFormat(channelCount: 2))
        // A later switch to HRTF loads them with the set (HRTFSet's own error, at makeKernel).
        if properties.renderingAlgorithm == .hrtf { requiredLibraries = [.mysofa, .fftw] }
    }

    public override var convertsInputSampleRates: Bool { true }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        guard properties.channels == 2 else {
            throw .formatNotSupported(node: id, reason: "the environment's output is stereo (channels must be 2, not \(properties.channels))")
        }
        return [.canonical(sampleRate: processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate),
                           channelCount: 2)]
    }

    public override func checkInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double) throws(AudioGraphError) -> Bool {
        try ResamplingInputAdapter.check(nodeID: id, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate)
        return true
    }

    public override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                          maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        try ResamplingInputAdapter(nodeID: id, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate,
                                   maximumFramesPerSlice: maximumFramesPerSlice)
    }

    /// With `variableRate`, every input not fed by a live source (a live one cannot be read
    /// ahead: its `rate` stays 1). The graph also passes `sourceIsLive` for a source that feeds
    /// another input too (fan-out), which must not be read on this input's timeline.
    public override func adaptsInput(bus: Int, sourceIsLive: Bool) -> Bool {
        properties.variableRate && !sourceIsLive
    }

    /// With `variableRate` and a source that is not live: a ``VariableRateInputAdapter`` (after
    /// a rate conversion when the rates differ); else the rate conversion alone.
    public override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                          maximumFramesPerSlice: Int, sourceIsLive: Bool) throws(AudioGraphError) -> InputAdapter? {
        guard properties.variableRate && !sourceIsLive else {
            return try makeInputAdapter(bus: bus, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate,
                                        maximumFramesPerSlice: maximumFramesPerSlice)
        }
        let converter = sourceFormat.sampleRate == targetSampleRate ? nil
            : try ResamplingInputAdapter(nodeID: id, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate,
                                         maximumFramesPerSlice: maximumFramesPerSlice)
        return VariableRateInputAdapter(channelCount: sourceFormat.channelCount, maximumFramesPerSlice: maximumFramesPerSlice,
                                        rates: try rates(maximumFrames: maximumFramesPerSlice), converter: converter)
    }

    /// With `variableRate`: an input at rate 2 consumes two frames per output frame.
    public override var maximumInputFramesPerOutputFrame: Double { properties.variableRate ? 2 : 1 }

    /// The rates the kernel hands its inputs' adapters (made with the first of them).
    private var sharedRates: VariableRateInputAdapter.Rates?

    /// Frames the shared rate buffer holds at least (made once: adapters keep the buffer they
    /// were made with, so it is never replaced).
    static let sharedRateCapacity = 4096

    /// The shared rate buffer, holding at least `maximumFrames` (control thread). Made once,
    /// at `max(maximumFrames, sharedRateCapacity)`, never replaced (adapters made earlier would
    /// read a stale one): slices longer than it holds are refused.
    func rates(maximumFrames: Int) throws(AudioGraphError) -> VariableRateInputAdapter.Rates {
        if let r = sharedRates {
            guard r.capacity >= maximumFrames else {
                throw .nodeSetupFailed(node: id, reason: "slices of \(maximumFrames) frames exceed the \(r.capacity) "
                                       + "its per-source rates were made for")
            }
            return r
        }
        let r = VariableRateInputAdapter.Rates(capacity: max(maximumFrames, Self.sharedRateCapacity))
        sharedRates = r
        return r
    }

    /// The HRTF file this node uses (`properties.hrtfPath`, else `hrtf`, else libmysofa's MIT KEMAR).
    public var hrtfPath: String { properties.hrtfPath ?? properties.hrtf ?? HRTFSet.defaultPath }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        let rate = outputFormats.first?.sampleRate ?? 48000
        var set: HRTFSet?
        if properties.renderingAlgorithm == .hrtf {
            do {
                set = try HRTFSet.shared(path: hrtfPath, sampleRate: rate)
            } catch {
                throw .nodeSetupFailed(node: id, reason: error.description)
            }
        }
        if properties.variableRate { _ = try rates(maximumFrames: maximumFramesPerSlice) }   // the kernel's, checked
        return EnvironmentKernel(node: self, sampleRate: rate, hrtfSet: set, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    public override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        switch name {
        case "distanceModel":
            guard let m = value as? DistanceModel else { throw .invalidProperty(node: id, name: name, reason: "expected a distance model") }
            guard m.referenceDistance >= 0, m.maxDistance > 0, m.rolloffFactor >= 0,
                  m.referenceDistance.isFinite, m.maxDistance.isFinite, m.rolloffFactor.isFinite else {
                throw .invalidProperty(node: id, name: name,
                                       reason: "needs referenceDistance >= 0, maxDistance > 0 and rolloffFactor >= 0")
            }
        case "reverb":
            guard let r = value as? ReverbSettings else { throw .invalidProperty(node: id, name: name, reason: "expected reverb settings") }
            guard r.level.isFinite, r.level >= -40, r.level <= 40 else {
                throw .invalidProperty(node: id, name: name, reason: "level must be -40...40 dB")
            }
        case "renderingAlgorithm", "hrtf", "channels", "variableRate":
            guard kernel == nil else {
                throw .invalidProperty(node: id, name: name, reason: "cannot be changed once the node is set up (only distanceModel and reverb can)")
            }
            switch name {
            case "renderingAlgorithm":
                guard value is RenderingAlgorithm else { throw .invalidProperty(node: id, name: name, reason: "expected equalPower or hrtf") }
            case "hrtf":
                guard value is String else { throw .invalidProperty(node: id, name: name, reason: "expected a file path") }
            case "variableRate":
                guard value is Bool else { throw .invalidProperty(node: id, name: name, reason: "expected true or false") }
            default:
                guard let c = PropertyValue.int(value), c == 2 else { throw .invalidProperty(node: id, name: name, reason: "the output is stereo: 2") }
            }
        default:
            throw .invalidProperty(node: id, name: name, reason: "no such property")
        }
    }

    public override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        switch name {
        case "distanceModel": properties.distanceModel = value as! DistanceModel
        case "reverb": properties.reverb = value as! ReverbSettings
        case "renderingAlgorithm": properties.renderingAlgorithm = value as! RenderingAlgorithm
        case "hrtf":
            properties.hrtf = value as? String
            properties.hrtfPath = nil
        case "channels": properties.channels = PropertyValue.int(value)!
        case "variableRate": properties.variableRate = value as! Bool
        default: return nil
        }
        return EnvironmentKernel.Settings(properties)
    }
}


/// Render side of ``EnvironmentNode``.
final class EnvironmentKernel: NodeKernel, @unchecked Sendable {
    /// Property values for the render thread (distance model and reverb settings).
    final class Settings: KernelMessage, @unchecked Sendable {
        let distance: DistanceModel
        let reverbEnabled: Bool
        let reverbPreset: Reverb.Preset
        let reverbLevel: Double
        let reverbFilter: EQBand?

        init(_ p: EnvironmentProperties) {
            reverbFilter = p.reverb.filter
            distance = p.distanceModel
            reverbEnabled = p.reverb.enabled
            reverbPreset = Reverb.Preset(rawValue: p.reverb.preset.rawValue) ?? .mediumRoom
            reverbLevel = p.reverb.level
        }
    }

    /// Parameter indices of one input.
    struct InputIndices {
        var x: Int, y: Int, z: Int, gain: Int, occlusion: Int, obstruction: Int, reverbBlend: Int
        var orientationX: Int, orientationY: Int, orientationZ: Int
        var coneInnerAngle: Int, coneOuterAngle: Int, coneOuterGain: Int
        var mode: Int
        var rate: Int
    }

    /// The listener's parameter indices, in ``ListenerValues`` order.
    struct ListenerIndices {
        var x: Int, y: Int, z: Int, yaw: Int, pitch: Int, roll: Int
        var forwardX: Int, forwardY: Int, forwardZ: Int, upX: Int, upY: Int, upZ: Int
    }

    /// The listener's parameter values over one slice.
    struct ListenerValues {
        var x: ParameterValues, y: ParameterValues, z: ParameterValues
        var yaw: ParameterValues, pitch: ParameterValues, roll: ParameterValues
        var forwardX: ParameterValues, forwardY: ParameterValues, forwardZ: ParameterValues
        var upX: ParameterValues, upY: ParameterValues, upZ: ParameterValues

        var isConstant: Bool {
            x.isConstant && y.isConstant && z.isConstant && yaw.isConstant && pitch.isConstant && roll.isConstant
                && forwardX.isConstant && forwardY.isConstant && forwardZ.isConstant
                && upX.isConstant && upY.isConstant && upZ.isConstant
        }
    }

    // MARK: Immutable after init
    private let inputCount: Int
    private let sampleRate: Double
    private let listenerIndices: ListenerIndices
    private let inputIndices: UnsafeMutablePointer<InputIndices>
    /// Where each input's rates go before it is pulled (`variableRate`), else nil.
    private let rates: VariableRateInputAdapter.Rates?
    /// One convolver per input in `hrtf` mode, empty in `equalPower` mode.
    private let convolvers: [HRTFConvolver]
    private let reverb: Reverb
    /// The filter on the reverb's output (both channels), and the reverb's output before it.
    private let reverbFilter: Biquad
    private let reverbOutput: ChannelBufferStorage
    private let reverbInputTable: UnsafeMutablePointer<UnsafePointer<Float>>
    private let reverbOutputTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    // MARK: Render thread only
    private var distance: DistanceModel
    private var reverbEnabled: Bool
    private var reverbFiltered: Bool
    private let directFilters: UnsafeMutablePointer<OcclusionFilter>
    /// The direct path's filters of the right channel of a stereo input (equalPower).
    private let rightFilters: UnsafeMutablePointer<OcclusionFilter>
    private let sendFilters: UnsafeMutablePointer<OcclusionFilter>
    private let mono: UnsafeMutablePointer<Float>
    private let direct: UnsafeMutablePointer<Float>
    private let send: UnsafeMutablePointer<Float>
    private let directions: UnsafeMutablePointer<Vector3>
    /// Per frame of the slice: listener position and axes (filled when the listener moves).
    private let listenerFrames: UnsafeMutablePointer<(position: Vector3, right: Vector3, up: Vector3, forward: Vector3)>
    private let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputPointer: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// A bypassed input's stereo mix before it is added, and its pointer table.
    private let bypassMix: ChannelBufferStorage
    private let bypassPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(node: EnvironmentNode, sampleRate: Double, hrtfSet: HRTFSet?, maximumFramesPerSlice: Int) {
        inputCount = node.inputBusCount
        self.sampleRate = sampleRate
        func index(_ a: ParameterAddress) -> Int { node.parameterIndex(of: a)! }
        func listener(_ name: String) -> Int { index(ParameterAddress(scope: .global, element: -1, group: "listener", name: name)) }
        listenerIndices = ListenerIndices(x: listener("x"), y: listener("y"), z: listener("z"), yaw: listener("yaw"),
                                          pitch: listener("pitch"), roll: listener("roll"),
                                          forwardX: listener("forwardX"), forwardY: listener("forwardY"),
                                          forwardZ: listener("forwardZ"), upX: listener("upX"), upY: listener("upY"),
                                          upZ: listener("upZ"))
        inputIndices = .allocate(capacity: max(1, inputCount))
        for i in 0..<inputCount {
            func input(_ name: String) -> Int { index(ParameterAddress(scope: .input, element: i, name: name)) }
            (inputIndices + i).initialize(to: InputIndices(x: input("x"), y: input("y"), z: input("z"), gain: input("gain"),
                                                           occlusion: input("occlusion"), obstruction: input("obstruction"),
                                                           reverbBlend: input("reverbBlend"),
                                                           orientationX: input("orientationX"), orientationY: input("orientationY"),
                                                           orientationZ: input("orientationZ"), coneInnerAngle: input("coneInnerAngle"),
                                                           coneOuterAngle: input("coneOuterAngle"),
                                                           coneOuterGain: input("coneOuterGain"), mode: input("mode"),
                                                           rate: input("rate")))
        }
        rates = node.properties.variableRate ? try? node.rates(maximumFrames: maximumFramesPerSlice) : nil   // checked by makeKernel
        convolvers = hrtfSet.map { set in (0..<node.inputBusCount).map { _ in HRTFConvolver(set: set) } } ?? []
        let settings = Settings(node.properties)
        distance = settings.distance
        reverbEnabled = settings.reverbEnabled
        reverb = Reverb(sampleRate: sampleRate, preset: settings.reverbPreset, level: settings.reverbLevel)
        reverbFilter = Biquad(band: settings.reverbFilter ?? EQBand(type: .peak), sampleRate: sampleRate, maximumChannelCount: 2)
        reverbFiltered = settings.reverbFilter != nil
        reverbOutput = ChannelBufferStorage(channelCount: 2, capacity: maximumFramesPerSlice)
        reverbInputTable = .allocate(capacity: 2)
        reverbOutputTable = .allocate(capacity: 2)
        for c in 0..<2 {
            reverbOutputTable[c] = reverbOutput.list.channel(c)
            reverbInputTable[c] = UnsafePointer(reverbOutput.list.channel(c))
        }
        directFilters = .allocate(capacity: max(1, inputCount))
        directFilters.initialize(repeating: OcclusionFilter(sampleRate: sampleRate), count: max(1, inputCount))
        rightFilters = .allocate(capacity: max(1, inputCount))
        rightFilters.initialize(repeating: OcclusionFilter(sampleRate: sampleRate), count: max(1, inputCount))
        sendFilters = .allocate(capacity: max(1, inputCount))
        sendFilters.initialize(repeating: OcclusionFilter(sampleRate: sampleRate), count: max(1, inputCount))
        let n = maximumFramesPerSlice
        mono = .allocate(capacity: n); mono.initialize(repeating: 0, count: n)
        direct = .allocate(capacity: n); direct.initialize(repeating: 0, count: n)
        send = .allocate(capacity: n); send.initialize(repeating: 0, count: n)
        directions = .allocate(capacity: n); directions.initialize(repeating: .zero, count: n)
        listenerFrames = .allocate(capacity: n)
        listenerFrames.initialize(repeating: (.zero, .zero, .zero, .zero), count: n)
        inputPointers = .allocate(capacity: 1024)
        outputPointer = .allocate(capacity: 1)
        bypassMix = ChannelBufferStorage(channelCount: 2, capacity: maximumFramesPerSlice)
        bypassPointers = .allocate(capacity: 2)
        bypassPointers[0] = bypassMix.list.channel(0)
        bypassPointers[1] = bypassMix.list.channel(1)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        inputIndices.deallocate()
        directFilters.deallocate()
        rightFilters.deallocate()
        sendFilters.deallocate()
        mono.deallocate(); direct.deallocate(); send.deallocate(); directions.deallocate()
        listenerFrames.deallocate(); inputPointers.deallocate(); outputPointer.deallocate(); bypassPointers.deallocate()
        reverbInputTable.deallocate(); reverbOutputTable.deallocate()
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        for c in convolvers { c.reset() }
        reverb.reset()
        reverbFilter.reset()
        for i in 0..<inputCount {
            directFilters[i].reset()
            rightFilters[i].reset()
            sendFilters[i].reset()
        }
    }

    override func receive(_ message: KernelMessage) {
        guard let s = message as? Settings else { return }
        distance = s.distance
        reverbEnabled = s.reverbEnabled
        reverb.setPreset(s.reverbPreset)
        reverb.setLevel(s.reverbLevel)
        if let band = s.reverbFilter {
            if !reverbFiltered { reverbFilter.reset() }
            reverbFilter.setTarget(band)
        }
        reverbFiltered = s.reverbFilter != nil
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let left = out.channel(0), right = out.channel(1)
        out.clear(frameCount: n)
        send.update(repeating: 0, count: n)

        // The listener: constant over the slice (the usual case) or per frame.
        let li = listenerIndices
        let lv = ListenerValues(x: parameterValues(li.x, context), y: parameterValues(li.y, context),
                                z: parameterValues(li.z, context), yaw: parameterValues(li.yaw, context),
                                pitch: parameterValues(li.pitch, context), roll: parameterValues(li.roll, context),
                                forwardX: parameterValues(li.forwardX, context), forwardY: parameterValues(li.forwardY, context),
                                forwardZ: parameterValues(li.forwardZ, context), upX: parameterValues(li.upX, context),
                                upY: parameterValues(li.upY, context), upZ: parameterValues(li.upZ, context))
        let listenerIsConstant = lv.isConstant
        let fixedListener = Self.listener(lv, 0)
        if !listenerIsConstant {
            for f in 0..<n { listenerFrames[f] = Self.listener(lv, f) }
        }

        var audible = false
        for i in 0..<inputCount {
            let idx = inputIndices[i]
            // Parameters advance every slice, pulled or not.
            let x = parameterValues(idx.x, context), y = parameterValues(idx.y, context), z = parameterValues(idx.z, context)
            let gain = parameterValues(idx.gain, context)
            let occlusion = parameterValues(idx.occlusion, context), obstruction = parameterValues(idx.obstruction, context)
            let blend = parameterValues(idx.reverbBlend, context)
            let ox = parameterValues(idx.orientationX, context), oy = parameterValues(idx.orientationY, context)
            let oz = parameterValues(idx.orientationZ, context)
            let inner = parameterValues(idx.coneInnerAngle, context), outer = parameterValues(idx.coneOuterAngle, context)
            let outerGain = parameterValues(idx.coneOuterGain, context)
            let coneIsConstant = ox.isConstant && oy.isConstant && oz.isConstant && inner.isConstant && outer.isConstant
                && outerGain.isConstant
            let geometryIsConstant = listenerIsConstant && x.isConstant && y.isConstant && z.isConstant && coneIsConstant

            let modeValues = parameterValues(idx.mode, context)
            // The input's rates, for its adapter (VariableRateInputAdapter) to read as it is pulled.
            let rate = parameterValues(idx.rate, context)
            if let rates {
                if rate.isConstant {
                    rates.values.update(repeating: rate.constant, count: n)
                } else {
                    for f in 0..<n { rates.values[f] = rate[f] }
                }
            }

            let input = inputs.pull(i)
            let hasSignal = input.map { !$0.isSilent } ?? false
            // This input's rendering (per slice): the node's algorithm, or its own mode.
            var mode = EnvironmentNode.InputMode(rawValue: Int(modeValues[0])) ?? .nodeAlgorithm
            switch mode {
            case .spatializeIfMonoEqualPower: mode = input?.channelCount ?? 1 == 1 ? .pointSource : .bypass
            case .spatializeIfMonoHRTF: mode = input?.channelCount ?? 1 == 1 ? .hrtf : .bypass
            default: break
            }
            if mode == .bypass {
                // No spatial rendering: the input mixed to stereo times its gain, nothing else.
                if let input, hasSignal {
                    for c in 0..<input.channelCount { inputPointers[c] = UnsafePointer(input.buffer.channel(c)) }
                    ChannelMixing.mix(input: UnsafeBufferPointer(start: inputPointers, count: input.channelCount),
                                      output: UnsafeBufferPointer(start: bypassPointers, count: 2), frameCount: n)
                    let bl = bypassPointers[0], br = bypassPointers[1]
                    if gain.isConstant {
                        let g = gain.constant
                        for f in 0..<n { left[f] += bl[f] * g; right[f] += br[f] * g }
                    } else {
                        for f in 0..<n { left[f] += bl[f] * gain[f]; right[f] += br[f] * gain[f] }
                    }
                    audible = true
                }
                continue
            }
            let usesHRTF = !convolvers.isEmpty && (mode == .nodeAlgorithm || mode == .hrtf)
            let convolver: HRTFConvolver? = usesHRTF ? convolvers[i] : nil
            // A stereo input keeps its channels in equalPower mode (the PannerNode's stereo law),
            // not as a point source.
            let stereo = convolver == nil && mode != .pointSource && input?.channelCount == 2
            // The right channel's filter carries state only while the input is stereo.
            if !stereo { rightFilters[i].reset() }
            let atRest = directFilters[i].isAtRest && rightFilters[i].isAtRest && sendFilters[i].isAtRest
                && (convolver?.isQuiet ?? true)
            if !hasSignal && atRest {
                // Nothing to hear: skipping is exactly what processing zeros would do.
                if let convolver {
                    convolver.skip(frameCount: n) { f in
                        let l = geometryIsConstant ? fixedListener : listenerFrames[f]
                        return Self.localOffset(Vector3(Double(x[f]), Double(y[f]), Double(z[f])), l)
                    }
                }
                continue
            }
            audible = true

            // 1. Down-mix to mono (or zeros while a silent input's tail rings out).
            var source: UnsafePointer<Float> = UnsafePointer(mono)
            if let input, hasSignal {
                if input.channelCount == 1 {
                    source = UnsafePointer(input.buffer.channel(0))
                } else {
                    for c in 0..<input.channelCount { inputPointers[c] = UnsafePointer(input.buffer.channel(c)) }
                    outputPointer[0] = mono
                    ChannelMixing.mix(input: UnsafeBufferPointer(start: inputPointers, count: input.channelCount),
                                      output: UnsafeBufferPointer(start: outputPointer, count: 1), frameCount: n)
                }
            } else {
                mono.update(repeating: 0, count: n)
            }
            // The direct path's channels: the stereo pair, or the mono signal twice.
            var sourceLeft = source, sourceRight = source
            if stereo, let input, hasSignal {
                sourceLeft = UnsafePointer(input.buffer.channel(0))
                sourceRight = UnsafePointer(input.buffer.channel(1))
            }

            // 2-4. Filters, gains, direction.
            var fixedLocal = Vector3.zero, fixedDistanceGain = 1.0, fixedPan = Self.Pan.silent
            if geometryIsConstant {
                let position = Vector3(Double(x.constant), Double(y.constant), Double(z.constant))
                fixedLocal = Self.localOffset(position, fixedListener)
                fixedDistanceGain = distance.gain(distance: fixedLocal.length)
                    * Self.coneGain(position, fixedListener.position, ox, oy, oz, inner, outer, outerGain, 0)
                fixedPan = Self.pan(fixedLocal, stereo: stereo)
            }
            let occlusionIsConstant = occlusion.isConstant && obstruction.isConstant
            if occlusionIsConstant {
                let directAttenuation = OcclusionFilter.directAttenuation(occlusion: Double(occlusion.constant),
                                                                          obstruction: Double(obstruction.constant))
                directFilters[i].setAttenuation(directAttenuation)
                rightFilters[i].setAttenuation(directAttenuation)
                sendFilters[i].setAttenuation(OcclusionFilter.reverbAttenuation(occlusion: Double(occlusion.constant),
                                                                                 obstruction: Double(obstruction.constant)))
            }
            let sending = reverbEnabled && !(blend.isConstant && blend.constant == 0)
            if geometryIsConstant && occlusionIsConstant && directFilters[i].isIdentity && rightFilters[i].isIdentity
                && sendFilters[i].isIdentity {
                // The common case (a still source, nothing in the way): the same arithmetic as the
                // general loop below without the filters, so the samples are bit-identical.
                let dg = Float(fixedDistanceGain), pan = fixedPan.float
                if convolver == nil && !sending && gain.isConstant {
                    // The hottest case (B5): a still source at a fixed gain. Same arithmetic, no
                    // per-frame branches, so the loops vectorise.
                    Self.panConstant(source: source, sourceLeft: sourceLeft, sourceRight: sourceRight, stereo: stereo,
                                     gain: gain.constant * dg, pan: pan, left: left, right: right, frameCount: n)
                } else {
                for f in 0..<n {
                    let g = gain[f] * dg
                    let d = source[f] * g
                    if sending { send[f] += d * blend[f] }
                    if convolver != nil {
                        direct[f] = d
                    } else if stereo {
                        let dl = sourceLeft[f] * g, dr = sourceRight[f] * g
                        left[f] += dl * pan.leftFromLeft + dr * pan.leftFromRight
                        right[f] += dl * pan.rightFromLeft + dr * pan.rightFromRight
                    } else {
                        left[f] += d * pan.leftFromLeft
                        right[f] += d * pan.rightFromLeft
                    }
                }
                }
                // Keep the (identity) filters' memory as the general path would leave it.
                if n > 0 {
                    _ = directFilters[i].process(sourceLeft[n - 1])
                    if stereo { _ = rightFilters[i].process(sourceRight[n - 1]) }
                    _ = sendFilters[i].process(source[n - 1])
                }
            } else {
                for f in 0..<n {
                    if !occlusionIsConstant {
                        let directAttenuation = OcclusionFilter.directAttenuation(occlusion: Double(occlusion[f]),
                                                                                  obstruction: Double(obstruction[f]))
                        directFilters[i].setAttenuation(directAttenuation)
                        rightFilters[i].setAttenuation(directAttenuation)
                        sendFilters[i].setAttenuation(OcclusionFilter.reverbAttenuation(occlusion: Double(occlusion[f]),
                                                                                         obstruction: Double(obstruction[f])))
                    }
                    var local = fixedLocal, distanceGain = fixedDistanceGain, pan = fixedPan
                    if !geometryIsConstant {
                        let l = listenerIsConstant ? fixedListener : listenerFrames[f]
                        let position = Vector3(Double(x[f]), Double(y[f]), Double(z[f]))
                        local = Self.localOffset(position, l)
                        distanceGain = distance.gain(distance: local.length)
                            * Self.coneGain(position, l.position, ox, oy, oz, inner, outer, outerGain, f)
                        if convolver == nil { pan = Self.pan(local, stereo: stereo) } else { directions[f] = local }
                    }
                    let g = gain[f] * Float(distanceGain)
                    let s = sendFilters[i].process(source[f]) * g
                    if sending { send[f] += s * blend[f] }
                    let p = pan.float
                    if convolver != nil {
                        direct[f] = directFilters[i].process(source[f]) * g
                    } else if stereo {
                        let dl = directFilters[i].process(sourceLeft[f]) * g
                        let dr = rightFilters[i].process(sourceRight[f]) * g
                        left[f] += dl * p.leftFromLeft + dr * p.leftFromRight
                        right[f] += dl * p.rightFromLeft + dr * p.rightFromRight
                    } else {
                        let d = directFilters[i].process(source[f]) * g
                        left[f] += d * p.leftFromLeft
                        right[f] += d * p.rightFromLeft
                    }
                }
            }
            if let convolver {
                if geometryIsConstant {
                    convolver.process(input: direct, direction: fixedLocal, left: left, right: right, frameCount: n, accumulate: true)
                } else {
                    convolver.process(input: direct, directions: directions, left: left, right: right, frameCount: n, accumulate: true)
                }
            }
        }

        // 5. The shared reverb.
        if reverbEnabled && reverbFiltered {
            let rl = reverbOutput.list.channel(0), rr = reverbOutput.list.channel(1)
            reverb.process(input: send, left: rl, right: rr, frameCount: n, accumulate: false)
            reverbFilter.process(input: UnsafeBufferPointer(start: reverbInputTable, count: 2),
                                 output: UnsafeBufferPointer(start: reverbOutputTable, count: 2),
                                 frameCount: n, startFrame: context.sampleTime)
            for i in 0..<n { left[i] += rl[i]; right[i] += rr[i] }
            audible = true
        } else if reverbEnabled {
            reverb.process(input: send, left: left, right: right, frameCount: n, accumulate: true)
            audible = true
        }
        // A NaN or infinity that reached a filter's memory goes no further than this slice.
        for i in 0..<inputCount {
            directFilters[i].clearNonFiniteState()
            rightFilters[i].clearNonFiniteState()
            sendFilters[i].clearNonFiniteState()
        }
        reverbFilter.clearNonFiniteState()
        outputIsSilent[0] = !audible
    }

    /// Adds a still, unfiltered input at the fixed gain `g` (the input's gain times the distance
    /// gain) into `left` and `right` through the pan matrix: `d = x * g`, `left += d * pan.l`,
    /// `right += d * pan.r` (stereo: each channel scaled, then the 2x2 matrix) — the general
    /// loop's arithmetic in its order, so the samples are bit-identical. Real-time safe.
    @inline(__always)
    private static func panConstant(source: UnsafePointer<Float>, sourceLeft: UnsafePointer<Float>,
                                    sourceRight: UnsafePointer<Float>, stereo: Bool, gain g: Float,
                                    pan: (leftFromLeft: Float, leftFromRight: Float, rightFromLeft: Float, rightFromRight: Float),
                                    left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount n: Int) {
        if stereo {
            let ll = pan.leftFromLeft, lr = pan.leftFromRight, rl = pan.rightFromLeft, rr = pan.rightFromRight
            for f in 0..<n {
                let dl = sourceLeft[f] * g, dr = sourceRight[f] * g
                left[f] += dl * ll + dr * lr
                right[f] += dl * rl + dr * rr
            }
        } else {
            let pl = pan.leftFromLeft, pr = pan.rightFromLeft
            for f in 0..<n {
                let d = source[f] * g
                left[f] += d * pl
                right[f] += d * pr
            }
        }
    }

    /// The listener at frame `f`: position and axes (forward/up vectors turned by yaw, pitch, roll).
    @inline(__always)
    private static func listener(_ v: ListenerValues, _ f: Int) -> (position: Vector3, right: Vector3, up: Vector3, forward: Vector3) {
        let axes = ListenerOrientation(yaw: Double(v.yaw[f]), pitch: Double(v.pitch[f]), roll: Double(v.roll[f]))
            .axes(forward: Vector3(Double(v.forwardX[f]), Double(v.forwardY[f]), Double(v.forwardZ[f])),
                  up: Vector3(Double(v.upX[f]), Double(v.upY[f]), Double(v.upZ[f])))
        return (Vector3(Double(v.x[f]), Double(v.y[f]), Double(v.z[f])), axes.right, axes.up, axes.forward)
    }

    /// A source position in the listener's frame (x right, y up, z behind).
    @inline(__always)
    private static func localOffset(_ source: Vector3, _ l: (position: Vector3, right: Vector3, up: Vector3, forward: Vector3)) -> Vector3 {
        let o = source - l.position
        return Vector3(o.dot(l.right), o.dot(l.up), -o.dot(l.forward))
    }

    /// The sound cone's gain at frame `f` (world space: it does not depend on the listener's orientation).
    @inline(__always)
    private static func coneGain(_ source: Vector3, _ listenerPosition: Vector3, _ ox: ParameterValues, _ oy: ParameterValues,
                                 _ oz: ParameterValues, _ inner: ParameterValues, _ outer: ParameterValues,
                                 _ outerGain: ParameterValues, _ f: Int) -> Double {
        WebAudioPanning.coneGain(sourcePosition: source, orientation: Vector3(Double(ox[f]), Double(oy[f]), Double(oz[f])),
                                 listenerPosition: listenerPosition, coneInnerAngle: Double(inner[f]),
                                 coneOuterAngle: Double(outer[f]), coneOuterGain: Double(outerGain[f]))
    }

    /// The equal-power panning of one input as a 2×2 matrix (a mono input uses the left column).
    struct Pan {
        var leftFromLeft: Double, leftFromRight: Double, rightFromLeft: Double, rightFromRight: Double
        static let silent = Pan(leftFromLeft: 0, leftFromRight: 0, rightFromLeft: 0, rightFromRight: 0)

        @inline(__always)
        var float: (leftFromLeft: Float, leftFromRight: Float, rightFromLeft: Float, rightFromRight: Float) {
            (Float(leftFromLeft), Float(leftFromRight), Float(rightFromLeft), Float(rightFromRight))
        }
    }

    /// Equal-power panning of a listener-relative offset (the PannerNode azimuth in that frame):
    /// the mono gains, or the stereo matrix.
    @inline(__always)
    private static func pan(_ local: Vector3, stereo: Bool) -> Pan {
        let a = WebAudioPanning.azimuthElevation(source: local, listenerPosition: .zero,
                                                 forward: Vector3(0, 0, -1), up: Vector3(0, 1, 0))
        if stereo {
            let m = WebAudioPanning.equalPowerStereoMatrix(azimuth: a.azimuth)
            return Pan(leftFromLeft: m.leftFromLeft, leftFromRight: m.leftFromRight, rightFromLeft: m.rightFromLeft,
                       rightFromRight: m.rightFromRight)
        }
        let g = WebAudioPanning.equalPowerGains(azimuth: a.azimuth)
        return Pan(leftFromLeft: g.left, leftFromRight: 0, rightFromLeft: g.right, rightFromRight: 0)
    }
}

extension EnvironmentNode {
    /// The largest `inputBusCount` a graph file may give an environment.
    public static let maximumInputBusCount = 1024

    /// The `environment` node type: 1...1024 mono or stereo inputs placed in 3D, a stereo output,
    /// ``EnvironmentProperties`` (`distanceModel` and `reverb` may change while the graph runs;
    /// an `hrtf` SOFA file is checked before it is read), ``ParameterTable/environment``.
    package static let descriptor = NodeTypeDescriptor(
        name: "environment", kind: .mixer,
        inputBuses: BusCountRule(defaultCount: 1, minimum: 1, maximum: maximumInputBusCount), outputBusCount: 1,
        propertyKeys: ["distanceModel", "renderingAlgorithm", "hrtf", "reverb", "channels", "variableRate"],
        runtimePropertyKeys: ["distanceModel", "reverb"], convertsInputs: true, parameters: .environment,
        decode: { reader in
            var result = EnvironmentProperties()
            if let model = reader.object("distanceModel", allowed: ["model", "referenceDistance", "maxDistance", "rolloffFactor"], required: []) {
                if let type = model.choice("model", as: DistanceModelType.self) { result.distanceModel.model = type }
                if let distance = model.nonNegativeNumber("referenceDistance") { result.distanceModel.referenceDistance = distance }
                if let distance = model.positiveNumber("maxDistance") { result.distanceModel.maxDistance = distance }
                if let factor = model.nonNegativeNumber("rolloffFactor") { result.distanceModel.rolloffFactor = factor }
                if result.distanceModel.model == .linear, result.distanceModel.maxDistance < result.distanceModel.referenceDistance {
                    model.reportInvalid("maxDistance \(ParameterInfo.format(result.distanceModel.maxDistance)) must not be less than referenceDistance \(ParameterInfo.format(result.distanceModel.referenceDistance)) for the linear model")
                }
            }
            if let algorithm = reader.choice("renderingAlgorithm", as: RenderingAlgorithm.self) { result.renderingAlgorithm = algorithm }
            if let variable = reader.bool("variableRate") { result.variableRate = variable }
            if let file = reader.file("hrtf") {
                result.hrtf = file.name
                result.hrtfPath = file.path
            }
            if let channels = reader.integer("channels", in: 1...FormatDescription.maximumChannelCount), channels != 2 {
                reader.reportInvalid("channels", "an environment's output is stereo: channels must be 2, found \(channels)")
            }
            if let reverb = reader.object("reverb", allowed: ["enabled", "preset", "level"], required: []) {
                if let enabled = reverb.bool("enabled") { result.reverb.enabled = enabled }
                if let preset = reverb.choice("preset", as: ReverbPreset.self) { result.reverb.preset = preset }
                if let level = reverb.number("level", in: -40...40) { result.reverb.level = level }
            }
            return result
        },
        typedProperty: { name, options in
            guard let p = options as? EnvironmentProperties else { return nil }
            switch name {
            case "distanceModel": return p.distanceModel
            case "reverb": return p.reverb
            default: return nil
            }
        },
        checkFiles: { options, context in
            guard let p = options as? EnvironmentProperties, let path = p.hrtfPath, let file = p.hrtf,
                  let reason = FileSystemPath.sofaProblem(path) else { return }
            context.reportUnreadable("hrtf", file: file, reason: reason)
        },
        checkFormat: { _, context in
            context.checkDeclaredChannels(property: 2, propertyGiven: true, what: "an environment's output (stereo)")
        },
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            EnvironmentNode(id: context.id, sampleRate: context.sampleRate, inputBusCount: context.inputBusCount,
                            properties: context.options(as: EnvironmentProperties.self) ?? EnvironmentProperties())
        })
}
