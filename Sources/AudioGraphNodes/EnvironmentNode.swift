// The 3D environment: N inputs placed around a listener, rendered to stereo (cf. AVAudioEnvironmentNode).

/// Places `inputBusCount` sources around a listener and renders them to one stereo output
/// (cf. AVAudioEnvironmentNode, with the Web Audio PannerNode's formulas).
///
/// Per input, every frame (a-rate parameters, per-sample state, so the output does not depend on
/// the slice size):
/// 1. the input is down-mixed to mono (Web Audio "speakers" rules, or "discrete");
/// 2. the direct path goes through the ``OcclusionFilter`` of occlusion + obstruction dB, the
///    reverb send through that of the occlusion alone (obstruction muffles only the direct sound);
/// 3. both are scaled by `gain · distanceGain(d)` (``DistanceModel/gain(distance:)``, the PannerNode
///    distance models; d = |source - listener|), the send also by `reverbBlend` (the direct
///    sound is not reduced by the blend);
/// 4. `equalPower`: the direct signal is panned with the PannerNode's azimuth and equal-power
///    gains (``WebAudioPanning``), listener turned by yaw, pitch, roll (``ListenerOrientation``);
///    `hrtf`: it is convolved with the nearest measured HRTF of its listener-relative direction
///    (``HRTFConvolver``: 128 frames of latency, crossfaded motion);
/// 5. the sum of the sends, when `reverb.enabled`, goes through the shared ``Reverb`` (preset,
///    level in dB) and is added to the output.
///
/// Inputs at another sample rate are converted to the environment's rate (libsamplerate, best
/// quality); any channel count is accepted. The output is stereo (property `channels` must be 2).
///
/// Parameters: `listener.x|y|z` (m), `listener.yaw|pitch|roll` (degrees), `input.N.x|y|z` (m),
/// `input.N.gain` 0...4, `input.N.occlusion` and `input.N.obstruction` (dB, -100...0),
/// `input.N.reverbBlend` 0...1. Properties: `distanceModel` and `reverb` (also while running),
/// `renderingAlgorithm` and `hrtf` (before initialize).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread; the HRTF
/// set is loaded (file I/O, FFT planning) at initialize on the control thread.
public final class EnvironmentNode: GraphNode, @unchecked Sendable {
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
                   parameters: NodeSchema.for(.environment).parameterInfos(sampleRate: sampleRate, inputBusCount: inputBusCount,
                                                                            bandCount: 0),
                   declaredFormat: PartialStreamFormat(channelCount: 2))
    }

    public override var convertsInputSampleRates: Bool { true }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        guard properties.channels == 2 else {
            throw .formatNotSupported(node: id, reason: "the environment's output is stereo (channels must be 2, not \(properties.channels))")
        }
        return [.canonical(sampleRate: processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate),
                           channelCount: 2)]
    }

    public override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                          maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        try ResamplingInputAdapter(nodeID: id, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate,
                                   maximumFramesPerSlice: maximumFramesPerSlice)
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
        case "renderingAlgorithm", "hrtf", "channels":
            guard kernel == nil else {
                throw .invalidProperty(node: id, name: name, reason: "cannot be changed once the node is set up (only distanceModel and reverb can)")
            }
            switch name {
            case "renderingAlgorithm":
                guard value is RenderingAlgorithm else { throw .invalidProperty(node: id, name: name, reason: "expected equalPower or hrtf") }
            case "hrtf":
                guard value is String else { throw .invalidProperty(node: id, name: name, reason: "expected a file path") }
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

        init(_ p: EnvironmentProperties) {
            distance = p.distanceModel
            reverbEnabled = p.reverb.enabled
            reverbPreset = Reverb.Preset(rawValue: p.reverb.preset.rawValue) ?? .mediumRoom
            reverbLevel = p.reverb.level
        }
    }

    /// Parameter indices of one input.
    struct InputIndices {
        var x: Int, y: Int, z: Int, gain: Int, occlusion: Int, obstruction: Int, reverbBlend: Int
    }

    // MARK: Immutable after init
    private let inputCount: Int
    private let sampleRate: Double
    private let listenerIndices: (x: Int, y: Int, z: Int, yaw: Int, pitch: Int, roll: Int)
    private let inputIndices: UnsafeMutablePointer<InputIndices>
    /// One convolver per input in `hrtf` mode, empty in `equalPower` mode.
    private let convolvers: [HRTFConvolver]
    private let reverb: Reverb

    // MARK: Render thread only
    private var distance: DistanceModel
    private var reverbEnabled: Bool
    private let directFilters: UnsafeMutablePointer<OcclusionFilter>
    private let sendFilters: UnsafeMutablePointer<OcclusionFilter>
    private let mono: UnsafeMutablePointer<Float>
    private let direct: UnsafeMutablePointer<Float>
    private let send: UnsafeMutablePointer<Float>
    private let directions: UnsafeMutablePointer<Vector3>
    /// Per frame of the slice: listener position and axes (filled when the listener moves).
    private let listenerFrames: UnsafeMutablePointer<(position: Vector3, right: Vector3, up: Vector3, forward: Vector3)>
    private let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputPointer: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(node: EnvironmentNode, sampleRate: Double, hrtfSet: HRTFSet?, maximumFramesPerSlice: Int) {
        inputCount = node.inputBusCount
        self.sampleRate = sampleRate
        func index(_ a: ParameterAddress) -> Int { node.parameterIndex(of: a)! }
        func listener(_ name: String) -> Int { index(ParameterAddress(scope: .global, element: -1, group: "listener", name: name)) }
        listenerIndices = (listener("x"), listener("y"), listener("z"), listener("yaw"), listener("pitch"), listener("roll"))
        inputIndices = .allocate(capacity: max(1, inputCount))
        for i in 0..<inputCount {
            func input(_ name: String) -> Int { index(ParameterAddress(scope: .input, element: i, name: name)) }
            (inputIndices + i).initialize(to: InputIndices(x: input("x"), y: input("y"), z: input("z"), gain: input("gain"),
                                                           occlusion: input("occlusion"), obstruction: input("obstruction"),
                                                           reverbBlend: input("reverbBlend")))
        }
        convolvers = hrtfSet.map { set in (0..<node.inputBusCount).map { _ in HRTFConvolver(set: set) } } ?? []
        let settings = Settings(node.properties)
        distance = settings.distance
        reverbEnabled = settings.reverbEnabled
        reverb = Reverb(sampleRate: sampleRate, preset: settings.reverbPreset, level: settings.reverbLevel)
        directFilters = .allocate(capacity: max(1, inputCount))
        directFilters.initialize(repeating: OcclusionFilter(sampleRate: sampleRate), count: max(1, inputCount))
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
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        inputIndices.deallocate()
        directFilters.deallocate()
        sendFilters.deallocate()
        mono.deallocate(); direct.deallocate(); send.deallocate(); directions.deallocate()
        listenerFrames.deallocate(); inputPointers.deallocate(); outputPointer.deallocate()
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        for c in convolvers { c.reset() }
        reverb.reset()
        for i in 0..<inputCount {
            directFilters[i].reset()
            sendFilters[i].reset()
        }
    }

    override func receive(_ message: KernelMessage) {
        guard let s = message as? Settings else { return }
        distance = s.distance
        reverbEnabled = s.reverbEnabled
        reverb.setPreset(s.reverbPreset)
        reverb.setLevel(s.reverbLevel)
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let left = out.channel(0), right = out.channel(1)
        out.clear(frameCount: n)
        send.update(repeating: 0, count: n)

        // The listener: constant over the slice (the usual case) or per frame.
        let lx = parameterValues(listenerIndices.x, context), ly = parameterValues(listenerIndices.y, context)
        let lz = parameterValues(listenerIndices.z, context)
        let yaw = parameterValues(listenerIndices.yaw, context), pitch = parameterValues(listenerIndices.pitch, context)
        let roll = parameterValues(listenerIndices.roll, context)
        let listenerIsConstant = lx.isConstant && ly.isConstant && lz.isConstant && yaw.isConstant && pitch.isConstant && roll.isConstant
        let fixedListener = Self.listener(lx, ly, lz, yaw, pitch, roll, 0)
        if !listenerIsConstant {
            for f in 0..<n { listenerFrames[f] = Self.listener(lx, ly, lz, yaw, pitch, roll, f) }
        }

        var audible = false
        for i in 0..<inputCount {
            let idx = inputIndices[i]
            // Parameters advance every slice, pulled or not.
            let x = parameterValues(idx.x, context), y = parameterValues(idx.y, context), z = parameterValues(idx.z, context)
            let gain = parameterValues(idx.gain, context)
            let occlusion = parameterValues(idx.occlusion, context), obstruction = parameterValues(idx.obstruction, context)
            let blend = parameterValues(idx.reverbBlend, context)
            let geometryIsConstant = listenerIsConstant && x.isConstant && y.isConstant && z.isConstant

            let input = inputs.pull(i)
            let hasSignal = input.map { !$0.isSilent } ?? false
            let convolver: HRTFConvolver? = convolvers.isEmpty ? nil : convolvers[i]
            let atRest = directFilters[i].isAtRest && sendFilters[i].isAtRest && (convolver?.isQuiet ?? true)
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

            // 2-4. Filters, gains, direction.
            var fixedLocal = Vector3.zero, fixedDistanceGain = 1.0, fixedPan = (left: 0.0, right: 0.0)
            if geometryIsConstant {
                fixedLocal = Self.localOffset(Vector3(Double(x.constant), Double(y.constant), Double(z.constant)), fixedListener)
                fixedDistanceGain = distance.gain(distance: fixedLocal.length)
                fixedPan = Self.pan(fixedLocal)
            }
            let occlusionIsConstant = occlusion.isConstant && obstruction.isConstant
            if occlusionIsConstant {
                directFilters[i].setAttenuation(OcclusionFilter.directAttenuation(occlusion: Double(occlusion.constant),
                                                                                   obstruction: Double(obstruction.constant)))
                sendFilters[i].setAttenuation(OcclusionFilter.reverbAttenuation(occlusion: Double(occlusion.constant),
                                                                                 obstruction: Double(obstruction.constant)))
            }
            let sending = reverbEnabled && !(blend.isConstant && blend.constant == 0)
            if geometryIsConstant && occlusionIsConstant && directFilters[i].isIdentity && sendFilters[i].isIdentity {
                // The common case (a still source, nothing in the way): the same arithmetic as the
                // general loop below without the filters, so the samples are bit-identical.
                let dg = Float(fixedDistanceGain), pl = Float(fixedPan.left), pr = Float(fixedPan.right)
                for f in 0..<n {
                    let d = source[f] * (gain[f] * dg)
                    if sending { send[f] += d * blend[f] }
                    if convolver == nil {
                        left[f] += d * pl
                        right[f] += d * pr
                    } else {
                        direct[f] = d
                    }
                }
                // Keep the (identity) filters' memory as the general path would leave it.
                if n > 0 {
                    _ = directFilters[i].process(source[n - 1])
                    _ = sendFilters[i].process(source[n - 1])
                }
            } else {
                for f in 0..<n {
                    if !occlusionIsConstant {
                        directFilters[i].setAttenuation(OcclusionFilter.directAttenuation(occlusion: Double(occlusion[f]),
                                                                                           obstruction: Double(obstruction[f])))
                        sendFilters[i].setAttenuation(OcclusionFilter.reverbAttenuation(occlusion: Double(occlusion[f]),
                                                                                         obstruction: Double(obstruction[f])))
                    }
                    var local = fixedLocal, distanceGain = fixedDistanceGain, pan = fixedPan
                    if !geometryIsConstant {
                        local = Self.localOffset(Vector3(Double(x[f]), Double(y[f]), Double(z[f])),
                                                 listenerIsConstant ? fixedListener : listenerFrames[f])
                        distanceGain = distance.gain(distance: local.length)
                        if convolver == nil { pan = Self.pan(local) } else { directions[f] = local }
                    }
                    let g = gain[f] * Float(distanceGain)
                    let m = source[f]
                    let d = directFilters[i].process(m) * g
                    let s = sendFilters[i].process(m) * g
                    if sending { send[f] += s * blend[f] }
                    if convolver == nil {
                        left[f] += d * Float(pan.left)
                        right[f] += d * Float(pan.right)
                    } else {
                        direct[f] = d
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
        if reverbEnabled {
            reverb.process(input: send, left: left, right: right, frameCount: n, accumulate: true)
            audible = true
        }
        outputIsSilent[0] = !audible
    }

    /// The listener at frame `f`: position and axes.
    @inline(__always)
    private static func listener(_ x: ParameterValues, _ y: ParameterValues, _ z: ParameterValues, _ yaw: ParameterValues,
                                 _ pitch: ParameterValues, _ roll: ParameterValues, _ f: Int)
        -> (position: Vector3, right: Vector3, up: Vector3, forward: Vector3) {
        let axes = ListenerOrientation(yaw: Double(yaw[f]), pitch: Double(pitch[f]), roll: Double(roll[f])).axes
        return (Vector3(Double(x[f]), Double(y[f]), Double(z[f])), axes.right, axes.up, axes.forward)
    }

    /// A source position in the listener's frame (x right, y up, z behind).
    @inline(__always)
    private static func localOffset(_ source: Vector3, _ l: (position: Vector3, right: Vector3, up: Vector3, forward: Vector3)) -> Vector3 {
        let o = source - l.position
        return Vector3(o.dot(l.right), o.dot(l.up), -o.dot(l.forward))
    }

    /// Equal-power gains of a listener-relative offset (the PannerNode azimuth in that frame).
    @inline(__always)
    private static func pan(_ local: Vector3) -> (left: Double, right: Double) {
        let a = WebAudioPanning.azimuthElevation(source: local, listenerPosition: .zero,
                                                 forward: Vector3(0, 0, -1), up: Vector3(0, 1, 0))
        return WebAudioPanning.equalPowerGains(azimuth: a.azimuth)
    }
}
