// The engine API's 3D environment (cf. AVAudioEnvironmentNode) over the graph's environment node.
import AudioGraphNodes
import Foundation

/// A listener's orientation as yaw, pitch and roll in degrees (cf. AVAudio3DAngularOrientation).
public struct Audio3DAngularOrientation: Sendable, Hashable {
    public var yaw: Float
    public var pitch: Float
    public var roll: Float
    public init(yaw: Float, pitch: Float, roll: Float) {
        self.yaw = yaw
        self.pitch = pitch
        self.roll = roll
    }
}

/// Makes an ``Audio3DAngularOrientation`` (cf. AVAudioMake3DAngularOrientation).
public func AudioMake3DAngularOrientation(_ yaw: Float, _ pitch: Float, _ roll: Float) -> Audio3DAngularOrientation {
    Audio3DAngularOrientation(yaw: yaw, pitch: pitch, roll: roll)
}

/// A listener's orientation as forward and up vectors (cf. AVAudio3DVectorOrientation).
public struct Audio3DVectorOrientation: Sendable, Hashable {
    public var forward: Audio3DPoint
    public var up: Audio3DPoint
    public init(forward: Audio3DPoint, up: Audio3DPoint) {
        self.forward = forward
        self.up = up
    }
}

/// Makes an ``Audio3DVectorOrientation`` (cf. AVAudioMake3DVectorOrientation).
public func AudioMake3DVectorOrientation(_ forward: Audio3DPoint, _ up: Audio3DPoint) -> Audio3DVectorOrientation {
    Audio3DVectorOrientation(forward: forward, up: up)
}

/// How gain falls with distance (cf. AVAudioEnvironmentDistanceAttenuationModel; the Web Audio
/// PannerNode's formulas).
public enum AudioEnvironmentDistanceAttenuationModel: Int, Sendable {
    case exponential = 1, inverse = 2, linear = 3
}

/// The environment's distance attenuation (cf. AVAudioEnvironmentDistanceAttenuationParameters).
/// Changes apply at once, also while running.
public final class AudioEnvironmentDistanceAttenuationParameters: @unchecked Sendable {
    weak var environment: AudioEnvironmentNode?
    /// The model (default `.inverse`).
    public var distanceAttenuationModel: AudioEnvironmentDistanceAttenuationModel = .inverse { didSet { changed() } }
    /// Distance below which there is no attenuation, metres (default 1). Each value is used
    /// clamped to 0...Float.greatestFiniteMagnitude (NaN: the default), as Audio Units clamp.
    public var referenceDistance: Float = 1 { didSet { changed() } }
    /// Distance beyond which attenuation stops, metres (default 100000).
    public var maximumDistance: Float = 100_000 { didSet { changed() } }
    /// How fast gain falls (default 1).
    public var rolloffFactor: Float = 1 { didSet { changed() } }

    var distanceModel: DistanceModel {
        let model: DistanceModelType
        switch distanceAttenuationModel {
        case .exponential: model = .exponential
        case .inverse: model = .inverse
        case .linear: model = .linear
        }
        // AVAudioEnvironmentDistanceAttenuationParameters' ranges (0...FLT_MAX), clamped; NaN: the default.
        func clamped(_ v: Float, _ fallback: Double, minimum: Float = 0) -> Double {
            v.isNaN ? fallback : Double(min(max(v, minimum), .greatestFiniteMagnitude))
        }
        return DistanceModel(model: model, referenceDistance: clamped(referenceDistance, 1),
                             maxDistance: clamped(maximumDistance, 100_000, minimum: .leastNormalMagnitude),
                             rolloffFactor: clamped(rolloffFactor, 1))
    }

    private func changed() { environment?.propertyChanged("distanceModel", distanceModel) }
}

/// The environment's reverb (cf. AVAudioEnvironmentReverbParameters): a preset room, a level and
/// an enable switch. Sources send to it with their `reverbBlend`.
public final class AudioEnvironmentReverbParameters: @unchecked Sendable {
    weak var environment: AudioEnvironmentNode?
    private(set) var preset: ReverbPreset = .mediumHall
    /// Whether the reverb runs (default false).
    public var enable = false { didSet { changed() } }
    /// The reverb's level, dB, -40...40 (default 0); a value outside is clamped, NaN ignored.
    public var level: Float = 0 {
        didSet {
            level = level.isNaN ? oldValue : min(max(level, -40), 40)
            changed()
        }
    }
    /// A filter on the reverb's output (both channels; a parametric band at 8 kHz, 0 dB, not
    /// bypassed by default). Changes apply at once, gliding over 10 ms. A band that cannot
    /// change the sound (bypassed, or a peak or shelf at 0 dB) is not run at all.
    public let filterParameters = AudioUnitEQFilterParameters(standaloneWithFrequency: 8000)

    init() {
        filterParameters.standaloneChanged = { [weak self] in self?.changed() }
    }

    /// Chooses a factory room (cf. `loadFactoryReverbPreset(_:)`).
    public func loadFactoryReverbPreset(_ preset: AudioUnitReverbPreset) {
        self.preset = preset.graphPreset
        changed()
    }

    var settings: ReverbSettings {
        let band = filterParameters.graphBand
        let isIdentity = band.bypass || (band.gain == 0 && [.peak, .lowShelf, .highShelf].contains(band.type))
        return ReverbSettings(enabled: enable, preset: preset, level: Double(level), filter: isIdentity ? nil : band)
    }

    private func changed() {
        environment?.propertyChanged("reverb", settings)
    }
}

/// A 3D mixer (cf. AVAudioEnvironmentNode): sources connected to it are placed around a
/// listener by their ``Audio3DMixing`` settings (position, occlusion, obstruction, reverb
/// blend), attenuated with distance, panned (Web Audio equal power) or rendered binaurally
/// (HRTF, libmysofa's SOFA set), and mixed to stereo, with a shared reverb.
///
/// Each source is rendered with its own ``Audio3DMixing/renderingAlgorithm`` (sources on
/// equal-power panning and on HRTF share one environment, its listener and its reverb), and
/// with `.auto` by its ``Audio3DMixing/sourceMode`` and the environment's ``outputType``. The
/// graph node loads the HRTF set when a connected source may need it (a change gives the node
/// a new graph node in one change list). ``outputVolume`` scales every input's gain (the
/// environment is linear, so this equals scaling its output). A source's `rate` (0.5...2) plays
/// it faster or slower, pitch following, as an ``AudioUnitVarispeed`` at that rate before the
/// input would (the same resampler), changes included while running, sample-exactly; a source
/// fed by the input node (live) stays at rate 1 (it cannot be read ahead). Every input is armed
/// for it, so no rate change rebuilds anything; the inputs are rendered on the environment's
/// thread, not in parallel. `reverbParameters.filterParameters` filters the reverb's output.
///
/// Thread safety: the engine's; listener and source settings may be set from any thread.
public final class AudioEnvironmentNode: AudioNode, AudioMixing, @unchecked Sendable {
    /// Makes an environment to attach to an engine.
    public init() {
        super.init(kindName: "environment")
        distanceAttenuationParameters.environment = self
        reverbParameters.environment = self
    }

    /// Distance attenuation.
    public let distanceAttenuationParameters = AudioEnvironmentDistanceAttenuationParameters()
    /// The reverb.
    public let reverbParameters = AudioEnvironmentReverbParameters()

    /// The algorithms this environment can render with.
    public var applicableRenderingAlgorithms: [Audio3DMixingRenderingAlgorithm] { [.equalPowerPanning, .sphericalHead, .HRTF, .soundField, .stereoPassThrough, .HRTFHQ, .auto] }

    override var maximumInputBuses: Int { 1024 }

    /// The buses in use plus one (at least 1).
    public override var numberOfInputs: Int { requiredInputBuses + 1 }

    /// The lowest input bus with nothing connected.
    public var nextAvailableInputBus: AudioNodeBus { lowestFreeInputBus }

    /// The listener's position (metres).
    public var listenerPosition = Audio3DPoint(x: 0, y: 0, z: 0) {
        didSet {
            setStoredParameter("listener.x", Double(listenerPosition.x), call: "listenerPosition")
            setStoredParameter("listener.y", Double(listenerPosition.y), call: "listenerPosition")
            setStoredParameter("listener.z", Double(listenerPosition.z), call: "listenerPosition")
        }
    }

    /// The listener's orientation as yaw, pitch, roll (degrees, -180...180, each clamped to the
    /// environment table's range, NaN keeping the old angle; positive yaw turns left).
    public var listenerAngularOrientation = Audio3DAngularOrientation(yaw: 0, pitch: 0, roll: 0) {
        didSet {
            let o = listenerAngularOrientation
            listenerAngularOrientation = Audio3DAngularOrientation(
                yaw: tableClamped("listener.yaw", o.yaw, fallback: oldValue.yaw),
                pitch: tableClamped("listener.pitch", o.pitch, fallback: oldValue.pitch),
                roll: tableClamped("listener.roll", o.roll, fallback: oldValue.roll))
            for (name, v) in [("yaw", listenerAngularOrientation.yaw), ("pitch", listenerAngularOrientation.pitch),
                              ("roll", listenerAngularOrientation.roll)] {
                setStoredParameter("listener.\(name)", Double(v), call: "listenerAngularOrientation")
            }
        }
    }

    override var parameterTable: ParameterTable { .environment }

    /// The listener's orientation as forward and up vectors (default forward -Z, up +Y); kept in
    /// step with ``listenerAngularOrientation``.
    public var listenerVectorOrientation: Audio3DVectorOrientation {
        get { Self.vectors(listenerAngularOrientation) }
        set { listenerAngularOrientation = Self.angles(newValue) }
    }

    /// The output hardware the rendering is meant for (cf. AVAudioEnvironmentOutputType): with
    /// the `.auto` algorithm, point sources are rendered binaurally (HRTF) for `.auto` and
    /// `.headphones`, with equal-power panning for `.builtInSpeakers` and `.externalSpeakers`.
    /// Linux does not detect the device: `.auto` means headphones.
    public var outputType: AudioEnvironmentOutputType = .auto {
        didSet {
            guard outputType != oldValue else { return }
            engine?.environmentInputsChanged(self, suffix: ".mode", call: "outputType")
            engine?.withLock { renderingAlgorithmMayHaveChanged() }
        }
    }

    /// Scales every source's gain (0...1; up to 4 amplifies; beyond, clamped; NaN ignored).
    public var outputVolume: Float = 1 {
        didSet {
            outputVolume = outputVolume.isNaN ? oldValue : min(max(outputVolume, 0), 4)
            engine?.environmentInputsChanged(self)
        }
    }

    override func mixingParameters(bus: Int, settings: MixingSettings) -> [(String, Double)] {
        [("input.\(bus).x", Double(settings.position.x)), ("input.\(bus).y", Double(settings.position.y)),
         ("input.\(bus).z", Double(settings.position.z)),
         ("input.\(bus).gain", Double(min(max(settings.volume * outputVolume, 0), 4))),
         ("input.\(bus).occlusion", Double(min(max(settings.occlusion, -100), 0))),
         ("input.\(bus).obstruction", Double(min(max(settings.obstruction, -100), 0))),
         ("input.\(bus).reverbBlend", Double(min(max(settings.reverbBlend, 0), 1))),
         ("input.\(bus).mode", Double(inputMode(settings).rawValue)),
         ("input.\(bus).rate", Double(settings.rate.isNaN ? 1 : min(max(settings.rate, 0.5), 2)))]
    }

    /// Whether point sources under `.auto` are rendered for headphones (binaurally).
    private var rendersForHeadphones: Bool { outputType == .auto || outputType == .headphones }

    /// The graph node's rendering of one source (`input.N.mode`).
    func inputMode(_ settings: MixingSettings) -> EnvironmentNode.InputMode {
        switch settings.renderingAlgorithm {
        case .HRTF, .HRTFHQ: return .hrtf
        case .equalPowerPanning, .sphericalHead, .soundField: return .equalPower
        case .stereoPassThrough: return .bypass
        case .auto:
            switch settings.sourceMode {
            case .bypass, .ambienceBed: return .bypass
            case .pointSource: return rendersForHeadphones ? .hrtf : .pointSource
            case .spatializeIfMono: return rendersForHeadphones ? .spatializeIfMonoHRTF : .spatializeIfMonoEqualPower
            }
        }
    }

    /// Whether the graph node loads the HRTF set: when any connected source may render with it.
    var wantsHRTF: Bool {
        guard let engine else { return false }
        return engine.connections.contains {
            guard $0.destination === self else { return false }
            let mode = inputMode($0.source.mixingSettings(for: self, bus: $0.destinationBus))
            return mode == .hrtf || mode == .spatializeIfMonoHRTF
        }
    }
    private var madeWithHRTF = false

    override var graphNodeIsStale: Bool { needsNewGraphNode || wantsHRTF != madeWithHRTF }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        var capacity = 8
        while capacity < requiredInputBuses { capacity *= 2 }
        madeWithHRTF = wantsHRTF
        let properties = EnvironmentProperties(distanceModel: distanceAttenuationParameters.distanceModel,
                                               renderingAlgorithm: madeWithHRTF ? .hrtf : .equalPower,
                                               reverb: reverbParameters.settings, variableRate: true)
        let node = EnvironmentNode(id: graphID, sampleRate: sampleRate, inputBusCount: min(capacity, 1024), properties: properties)
        if let rate = outputFormat?.sampleRate { node.declaredFormat.sampleRate = rate }
        return node
    }

    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        AudioFormat(standardFormatWithSampleRate: engineFormat.sampleRate, channels: 2) ?? engineFormat
    }

    /// The rendering algorithm a source asks for changed.
    func renderingAlgorithmMayHaveChanged() {
        if graphNodeIsStale && graphNode != nil { engine?.applyEdit("renderingAlgorithm") }
    }

    static func vectors(_ o: Audio3DAngularOrientation) -> Audio3DVectorOrientation {
        let (y, p, r) = (Double(o.yaw) * .pi / 180, Double(o.pitch) * .pi / 180, Double(o.roll) * .pi / 180)
        // Forward after yaw (about +Y, positive turns left) and pitch (up positive).
        let forward = (-sin(y) * cos(p), sin(p), -cos(y) * cos(p))
        // Up and right before roll, then roll (positive tilts the head right).
        let up0 = (sin(y) * sin(p), cos(p), cos(y) * sin(p))
        let right0 = (cos(y), 0.0, -sin(y))
        let up = (up0.0 * cos(r) + right0.0 * sin(r), up0.1 * cos(r) + right0.1 * sin(r), up0.2 * cos(r) + right0.2 * sin(r))
        return Audio3DVectorOrientation(forward: Audio3DPoint(x: Float(forward.0), y: Float(forward.1), z: Float(forward.2)),
                                        up: Audio3DPoint(x: Float(up.0), y: Float(up.1), z: Float(up.2)))
    }

    static func angles(_ v: Audio3DVectorOrientation) -> Audio3DAngularOrientation {
        func norm(_ p: Audio3DPoint) -> (Double, Double, Double) {
            let (x, y, z) = (Double(p.x), Double(p.y), Double(p.z))
            let l = (x * x + y * y + z * z).squareRoot()
            return l > 0 ? (x / l, y / l, z / l) : (0, 0, -1)
        }
        let f = norm(v.forward), u = norm(v.up)
        let yaw = atan2(-f.0, -f.2), pitch = asin(max(-1, min(1, f.1)))
        let up0 = (sin(yaw) * sin(pitch), cos(pitch), cos(yaw) * sin(pitch))
        let right0 = (cos(yaw), 0.0, -sin(yaw))
        let roll = atan2(u.0 * right0.0 + u.1 * right0.1 + u.2 * right0.2, u.0 * up0.0 + u.1 * up0.1 + u.2 * up0.2)
        return Audio3DAngularOrientation(yaw: Float(yaw * 180 / .pi), pitch: Float(pitch * 180 / .pi), roll: Float(roll * 180 / .pi))
    }
}

extension AudioEngine {
    /// A setting of the environment that enters its inputs' parameters changed (the output
    /// volume: `.gain`; the output type: `.mode`): those parameters are set again.
    func environmentInputsChanged(_ environment: AudioEnvironmentNode, suffix: String = ".gain", call: String = "outputVolume") {
        withLock {
            for c in connections where c.destination === environment {
                for (address, value) in mixingParameters(for: c) where address.hasSuffix(suffix) {
                    parameterChanged(environment, address: address, value: value, call: call)
                }
            }
        }
    }
}
