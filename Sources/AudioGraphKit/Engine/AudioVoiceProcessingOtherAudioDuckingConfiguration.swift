// How voice processing would duck other audio (cf. AVAudioVoiceProcessingOtherAudioDuckingConfiguration): kept, not applied on Linux.
import Foundation

/// The ducking of audio other than the voice chat while voice processing runs (cf.
/// AVAudioVoiceProcessingOtherAudioDuckingConfiguration). On Linux it is kept but not applied:
/// the other audio is other applications' PulseAudio streams, which PulseAudio's own policy
/// (`module-role-ducking`) ducks, not the engine.
public struct AudioVoiceProcessingOtherAudioDuckingConfiguration: Sendable {
    /// Ducking levels (Apple's raw values).
    public enum Level: Int, Sendable {
        /// The default ducking for typical voice chat.
        case `default` = 0
        /// The least ducking.
        case min = 10
        /// Medium ducking.
        case mid = 20
        /// The most ducking.
        case max = 30
    }

    /// Whether other audio is ducked according to the voice activity of both ends.
    public var enableAdvancedDucking: ObjCBool
    /// How much other audio is ducked.
    public var duckingLevel: Level

    /// Advanced ducking off, level `.default` (Apple's default).
    public init() {
        enableAdvancedDucking = false
        duckingLevel = .default
    }

    /// A configuration with both values.
    public init(enableAdvancedDucking: ObjCBool, duckingLevel: Level) {
        self.enableAdvancedDucking = enableAdvancedDucking
        self.duckingLevel = duckingLevel
    }
}
