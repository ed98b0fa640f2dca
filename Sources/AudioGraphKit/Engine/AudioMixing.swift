// Mixing properties a source carries into the mixer or environment it feeds (cf. AVAudioMixing).
import AudioGraphNodes
import Foundation

/// A point in the environment's space, metres (right-handed: +X right, +Y up, the listener
/// faces -Z by default).
public struct Audio3DPoint: Sendable, Hashable {
    public var x: Float
    public var y: Float
    public var z: Float
    public init(x: Float, y: Float, z: Float) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// Makes an ``Audio3DPoint`` (cf. AVAudioMake3DPoint).
public func AudioMake3DPoint(_ x: Float, _ y: Float, _ z: Float) -> Audio3DPoint { Audio3DPoint(x: x, y: y, z: z) }

/// How an environment renders a source (cf. AVAudio3DMixingRenderingAlgorithm), per source. On
/// Linux `.equalPowerPanning`, `.sphericalHead` and `.soundField` pan with the Web Audio
/// equal-power law, `.HRTF` and `.HRTFHQ` render binaurally with the SOFA HRTF set,
/// `.stereoPassThrough` is not spatialized (the channels pass to the output times the volume),
/// and `.auto` follows the source's ``Audio3DMixing/sourceMode`` and the environment's
/// ``AudioEnvironmentNode/outputType`` (point sources binaural for headphones, equal power for
/// speakers).
public enum Audio3DMixingRenderingAlgorithm: Int, Sendable, CaseIterable {
    case equalPowerPanning = 0
    case sphericalHead = 1
    case HRTF = 2
    case soundField = 3
    case stereoPassThrough = 5
    case HRTFHQ = 6
    case auto = 7
}

/// How an environment distributes a source's channels in space (cf. AVAudio3DMixingSourceMode).
/// Apple applies it with the `.auto` rendering algorithm only, and so does the environment here.
public enum Audio3DMixingSourceMode: Int, Sendable, CaseIterable {
    /// A mono source is a point source; one with more channels is bypassed (the default).
    case spatializeIfMono = 0
    /// No spatial rendering: the channels go to the output (up/down-mixed), times the volume;
    /// no distance, occlusion, obstruction or reverb.
    case bypass = 1
    /// All channels down-mixed and rendered as one source at the source's position.
    case pointSource = 2
    /// The channels spread around the listener as a far-field bed (on Linux: rendered as
    /// ``bypass``; the bed is not rotated into global space).
    case ambienceBed = 3
}

/// How a point source inside the listener's head is rendered (cf.
/// AVAudio3DMixingPointSourceInHeadMode; `.auto` rendering only). On Linux a source at the
/// listener's position is rendered in the middle of the head either way (as `.mono`).
public enum Audio3DMixingPointSourceInHeadMode: Int, Sendable, CaseIterable {
    /// One mono source inside the head (the default).
    case mono = 0
    /// The source's channels distributed to the output channels inside the head.
    case bypass = 1
}

/// The settings a source applies to one mixer or environment input (cf. AVAudioMixing's
/// properties). Kept on the source node; applied to the input bus it is connected to.
struct MixingSettings: Sendable, Hashable {
    var volume: Float = 1
    var pan: Float = 0
    var position = Audio3DPoint(x: 0, y: 0, z: 0)
    var obstruction: Float = 0
    var occlusion: Float = 0
    var reverbBlend: Float = 0
    var rate: Float = 1
    var renderingAlgorithm: Audio3DMixingRenderingAlgorithm = .equalPowerPanning
    var sourceMode: Audio3DMixingSourceMode = .spatializeIfMono
    var pointSourceInHeadMode: Audio3DMixingPointSourceInHeadMode = .mono

    /// These settings with every number inside the range of the input parameter it becomes
    /// (the mixer's `input.N.volume`/`pan`, the environment's `input.N.x`/`obstruction`/…;
    /// `rate` within Apple's 0.5...2), as an Audio Unit clamps; a NaN keeps `old`'s value.
    func clamped(keeping old: MixingSettings) -> MixingSettings {
        func clamp(_ v: Float, _ table: ParameterTable, _ name: String, _ previous: Float) -> Float {
            guard !v.isNaN else { return previous }
            guard let a = ParameterAddress("input.0.\(name)"),
                  let info = table.parameterInfo(for: a, sampleRate: .infinity, inputBusCount: .max, bandCount: .max) else { return v }
            return Float(info.clamped(Double(v)))
        }
        var s = self
        s.volume = clamp(volume, .mixer, "volume", old.volume)
        s.pan = clamp(pan, .mixer, "pan", old.pan)
        s.position = Audio3DPoint(x: clamp(position.x, .environment, "x", old.position.x),
                                  y: clamp(position.y, .environment, "y", old.position.y),
                                  z: clamp(position.z, .environment, "z", old.position.z))
        s.obstruction = clamp(obstruction, .environment, "obstruction", old.obstruction)
        s.occlusion = clamp(occlusion, .environment, "occlusion", old.occlusion)
        s.reverbBlend = clamp(reverbBlend, .environment, "reverbBlend", old.reverbBlend)
        s.rate = rate.isNaN ? old.rate : min(2, max(0.5, rate))
        return s
    }
}

/// Stereo mixing: pan (cf. AVAudioStereoMixing).
public protocol AudioStereoMixing: AnyObject {
    /// Pan -1 (left) ... 1 (right) into a stereo mixer input; no effect elsewhere.
    var pan: Float { get set }
}

/// 3D mixing into an environment (cf. AVAudio3DMixing).
public protocol Audio3DMixing: AnyObject {
    /// The source's position (metres).
    var position: Audio3DPoint { get set }
    /// Direct-path attenuation, dB -100...0.
    var obstruction: Float { get set }
    /// Direct and reverb attenuation, dB -100...0.
    var occlusion: Float { get set }
    /// The share of the source sent to the environment's reverb, 0...1.
    var reverbBlend: Float { get set }
    /// Playback rate in the environment, 0.5...2 (clamped; default 1): 2 plays the source an
    /// octave higher and twice as fast, 0.5 an octave lower (the varispeed's resampler, in the
    /// environment's input). Not applied to a source fed by a live input (the input node): it
    /// plays at rate 1, since it cannot be read ahead. No effect on a mixer input.
    var rate: Float { get set }
    /// How the environment renders this source.
    var renderingAlgorithm: Audio3DMixingRenderingAlgorithm { get set }
    /// How the source's channels are placed (with the `.auto` rendering algorithm).
    var sourceMode: Audio3DMixingSourceMode { get set }
    /// How the source is rendered inside the listener's head (with `.auto`; stored on Linux).
    var pointSourceInHeadMode: Audio3DMixingPointSourceInHeadMode { get set }
}

/// Volume, pan and 3D properties a source applies to the mixer or environment input it feeds
/// (cf. AVAudioMixing). Setting them on the source sets them for every such connection; a
/// ``AudioMixingDestination`` sets them for one. A value outside a setting's range (that of the
/// mixer's or environment's input parameter it becomes) is clamped to it and a NaN ignored, as
/// an Audio Unit's parameter: the getters report what is applied.
public protocol AudioMixing: AudioStereoMixing, Audio3DMixing {
    /// Input volume 0...1 (the mixer accepts up to 4).
    var volume: Float { get set }
    /// The settings for the connection into `mixer`'s bus `bus` (nil: no such connection).
    func destination(forMixer mixer: AudioNode, bus: AudioNodeBus) -> AudioMixingDestination?
}

extension AudioMixing where Self: AudioNode {
    public var volume: Float {
        get { mixing.volume }
        set { updateMixing("volume") { $0.volume = newValue } }
    }
    public var pan: Float {
        get { mixing.pan }
        set { updateMixing("pan") { $0.pan = newValue } }
    }
    public var position: Audio3DPoint {
        get { mixing.position }
        set { updateMixing("position") { $0.position = newValue } }
    }
    public var obstruction: Float {
        get { mixing.obstruction }
        set { updateMixing("obstruction") { $0.obstruction = newValue } }
    }
    public var occlusion: Float {
        get { mixing.occlusion }
        set { updateMixing("occlusion") { $0.occlusion = newValue } }
    }
    public var reverbBlend: Float {
        get { mixing.reverbBlend }
        set { updateMixing("reverbBlend") { $0.reverbBlend = newValue } }
    }
    public var rate: Float {
        get { mixing.rate }
        set { updateMixing("rate") { $0.rate = newValue } }
    }
    public var renderingAlgorithm: Audio3DMixingRenderingAlgorithm {
        get { mixing.renderingAlgorithm }
        set {
            updateMixing("renderingAlgorithm") { $0.renderingAlgorithm = newValue }
            engine?.renderingAlgorithmsChanged(for: self)
        }
    }

    public var sourceMode: Audio3DMixingSourceMode {
        get { mixing.sourceMode }
        set {
            updateMixing("sourceMode") { $0.sourceMode = newValue }
            engine?.renderingAlgorithmsChanged(for: self)
        }
    }
    public var pointSourceInHeadMode: Audio3DMixingPointSourceInHeadMode {
        get { mixing.pointSourceInHeadMode }
        set { updateMixing("pointSourceInHeadMode") { $0.pointSourceInHeadMode = newValue } }
    }

    public func destination(forMixer mixer: AudioNode, bus: AudioNodeBus) -> AudioMixingDestination? {
        guard let engine, engine.outputConnectionPoints(for: self, outputBus: 0)
            .contains(where: { $0.node === mixer && $0.bus == bus }) else { return nil }
        return AudioMixingDestination(source: self, mixer: mixer, bus: bus)
    }
}

/// The mixing settings of one connection from a source into a mixer or environment input (cf.
/// AVAudioMixingDestination): setting them leaves the source's other connections alone.
public final class AudioMixingDestination: AudioMixing, @unchecked Sendable {
    private weak var source: AudioNode?
    /// The mixer or environment and the bus.
    public let connectionPoint: AudioConnectionPoint

    init(source: AudioNode, mixer: AudioNode, bus: Int) {
        self.source = source
        connectionPoint = AudioConnectionPoint(node: mixer, bus: bus)
    }

    private var settings: MixingSettings {
        guard let source, let mixer = connectionPoint.node else { return MixingSettings() }
        return source.mixingSettings(for: mixer, bus: connectionPoint.bus)
    }

    private func update(_ name: String, _ change: (inout MixingSettings) -> Void) {
        guard let source, let mixer = connectionPoint.node else { return }
        var s = source.mixingSettings(for: mixer, bus: connectionPoint.bus)
        change(&s)
        source.setDestinationMixing(s, mixer: mixer, bus: connectionPoint.bus, call: name)
    }

    public var volume: Float { get { settings.volume } set { update("volume") { $0.volume = newValue } } }
    public var pan: Float { get { settings.pan } set { update("pan") { $0.pan = newValue } } }
    public var position: Audio3DPoint { get { settings.position } set { update("position") { $0.position = newValue } } }
    public var obstruction: Float { get { settings.obstruction } set { update("obstruction") { $0.obstruction = newValue } } }
    public var occlusion: Float { get { settings.occlusion } set { update("occlusion") { $0.occlusion = newValue } } }
    public var reverbBlend: Float { get { settings.reverbBlend } set { update("reverbBlend") { $0.reverbBlend = newValue } } }
    public var rate: Float { get { settings.rate } set { update("rate") { $0.rate = newValue } } }
    public var renderingAlgorithm: Audio3DMixingRenderingAlgorithm {
        get { settings.renderingAlgorithm }
        set {
            update("renderingAlgorithm") { $0.renderingAlgorithm = newValue }
            if let source { source.engine?.renderingAlgorithmsChanged(for: source) }
        }
    }
    public var sourceMode: Audio3DMixingSourceMode {
        get { settings.sourceMode }
        set {
            update("sourceMode") { $0.sourceMode = newValue }
            if let source { source.engine?.renderingAlgorithmsChanged(for: source) }
        }
    }
    public var pointSourceInHeadMode: Audio3DMixingPointSourceInHeadMode {
        get { settings.pointSourceInHeadMode }
        set { update("pointSourceInHeadMode") { $0.pointSourceInHeadMode = newValue } }
    }

    public func destination(forMixer mixer: AudioNode, bus: AudioNodeBus) -> AudioMixingDestination? {
        source.flatMap { s in (s as? any AudioMixing)?.destination(forMixer: mixer, bus: bus) }
    }
}

extension AudioNode {
    /// The key of a per-destination setting.
    struct DestinationKey: Hashable {
        let mixer: ObjectIdentifier
        let bus: Int
    }

    /// The settings for the connection into `mixer`'s bus `bus`: the per-destination ones if
    /// set, else the source's own.
    func mixingSettings(for mixer: AudioNode, bus: Int) -> MixingSettings {
        destinationMixing[DestinationKey(mixer: ObjectIdentifier(mixer), bus: bus)] ?? mixing
    }

    func setDestinationMixing(_ s: MixingSettings, mixer: AudioNode, bus: Int, call: String) {
        withEngineLock {
            let key = DestinationKey(mixer: ObjectIdentifier(mixer), bus: bus)
            destinationMixing[key] = s.clamped(keeping: destinationMixing[key] ?? mixing)
            engine?.mixingChanged(self, call: call)
        }
    }

    /// Changes the source's own settings (every destination without its own) and applies them.
    func updateMixing(_ call: String, _ change: (inout MixingSettings) -> Void) {
        withEngineLock {
            let old = mixing
            change(&mixing)
            mixing = mixing.clamped(keeping: old)
            engine?.mixingChanged(self, call: call)
        }
    }

    /// Runs `body` under the engine's lock when attached (mixing setters may come from any thread).
    func withEngineLock(_ body: () -> Void) {
        if let engine { engine.withLock(body) } else { body() }
    }
}

extension AudioEngine {
    /// A source's rendering algorithm changed: environments it feeds may need another algorithm.
    func renderingAlgorithmsChanged(for source: AudioNode) {
        withLock {
            for c in connections where c.source === source {
                (c.destination as? AudioEnvironmentNode)?.renderingAlgorithmMayHaveChanged()
            }
        }
    }
}
