// The engine API's effect units' base classes (cf. AVAudioUnit, AVAudioUnitEffect).
import AudioGraphNodes
import Foundation

/// A node that processes audio with a unit (cf. AVAudioUnit). On Linux the units are the
/// engine's own nodes (and, later, LV2 plugins).
///
/// Thread safety: the engine's; parameters may be set from any thread.
public class AudioUnit: AudioNode, @unchecked Sendable {
    /// The unit's name (the node type).
    public var name: String { kindName }
    /// The unit's manufacturer.
    public var manufacturerName: String { "AudioGraph" }
}

/// An effect: one input, one output, and a bypass (cf. AVAudioUnitEffect).
///
/// Thread safety: the engine's; `bypass` may be set from any thread.
public class AudioUnitEffect: AudioUnit, @unchecked Sendable {
    /// When true the effect passes its input unchanged.
    public var bypass: Bool = false {
        didSet { if bypass != oldValue { applyBypass() } }
    }

    /// Applies ``bypass`` through the unit's parameters (subclasses).
    func applyBypass() {}
}
