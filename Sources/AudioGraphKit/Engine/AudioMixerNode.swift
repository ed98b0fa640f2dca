// The engine's mixer (cf. AVAudioMixerNode): any number of inputs, converted, panned, summed.
import AudioGraphNodes
import Foundation

/// Mixes its inputs into one output (cf. AVAudioMixerNode): each input is converted to the
/// mixer's rate (libsamplerate), brought to mono or stereo, panned (Web Audio equal-power),
/// scaled by the volume its source sets (``AudioMixing``), summed, and scaled by
/// ``outputVolume``. Input buses are added as connections need them (up to 1024): a connection
/// beyond the graph node's buses gives the mixer a larger graph node in the same change list.
///
/// Thread safety: the engine's; `outputVolume` may be set from any thread.
public final class AudioMixerNode: AudioNode, AudioMixing, @unchecked Sendable {
    /// Makes a mixer to attach to an engine.
    public init() { super.init(kindName: "mixer") }

    /// The most input buses a mixer has.
    static let maximumInputBuses = 1024

    /// The buses in use plus one (at least 1).
    public override var numberOfInputs: Int { requiredInputBuses + 1 }

    override var maximumInputBuses: Int { Self.maximumInputBuses }

    /// The lowest input bus with nothing connected.
    public var nextAvailableInputBus: AudioNodeBus { lowestFreeInputBus }

    /// The mixer's output volume, 0...1 (values up to 4 amplify; beyond, clamped). Applies at once (in a
    /// `performChanges` list: with it).
    public var outputVolume: Float {
        get { Float(storedParameter("volume", default: 1)) }
        set { setStoredParameter("volume", Double(newValue), call: "outputVolume") }
    }

    override var parameterTable: ParameterTable { .mixer }

    override func mixingParameters(bus: Int, settings: MixingSettings) -> [(String, Double)] {
        [("input.\(bus).volume", Double(min(max(settings.volume, 0), 4))),
         ("input.\(bus).pan", Double(min(max(settings.pan, -1), 1)))]
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        var capacity = 8
        while capacity < requiredInputBuses { capacity *= 2 }
        capacity = min(capacity, Self.maximumInputBuses)
        let channels = outputFormat?.channelCount ?? engineFormat.channelCount
        let node = MixerNode(id: graphID, sampleRate: sampleRate, inputBusCount: capacity,
                             properties: MixerProperties(channels: channels))
        if let rate = outputFormat?.sampleRate { node.declaredFormat.sampleRate = rate }
        return node
    }

    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        engineFormat
    }
}
