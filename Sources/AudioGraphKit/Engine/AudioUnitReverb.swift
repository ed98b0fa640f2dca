// The engine API's reverb (cf. AVAudioUnitReverb) over the graph's reverb node.
import AudioGraphNodes
import Foundation

/// A reverb (cf. AVAudioUnitReverb), the graph's `reverb` node: a factory room chosen with
/// ``loadFactoryPreset(_:)`` (default `.mediumHall`) and ``wetDryMix`` 0...100 % (50). The
/// room is rendered by the same engine as the environment's reverb send (``Reverb``).
/// ``AudioUnitEffect/bypass`` passes the input bit for bit (the node's `bypass` parameter; the
/// room keeps running, so turning bypass off brings back a live tail).
///
/// Thread safety: the engine's; parameters and presets may be set from any thread (applied at
/// the next slice, inside `performChanges` with its list).
public final class AudioUnitReverb: AudioUnitEffect, @unchecked Sendable {
    /// Makes a reverb to attach to an engine.
    public init() { super.init(kindName: "reverb") }

    override var parameterTable: ParameterTable { .reverb }

    private var preset: AudioUnitReverbPreset = .mediumHall

    /// Chooses a factory room; on a running engine the tail restarts in the new room.
    public func loadFactoryPreset(_ preset: AudioUnitReverbPreset) {
        self.preset = preset
        propertyChanged("preset", preset.graphPreset)
    }

    /// Wet share in percent, 0...100 (50); a value outside is clamped, NaN ignored.
    public var wetDryMix: Float {
        get { Float(storedParameter("wetDryMix", default: 50)) }
        set { setStoredParameter("wetDryMix", Double(newValue), call: "wetDryMix") }
    }

    override func applyBypass() {
        setStoredParameter("bypass", bypass ? 1 : 0, call: "bypass")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = ReverbNode(id: graphID, sampleRate: sampleRate, preset: preset.graphPreset)
        return declaring(outputFormat, on: node)
    }
}
