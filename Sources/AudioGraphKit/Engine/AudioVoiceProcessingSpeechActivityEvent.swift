// What the muted-speech listener is told (cf. AVAudioVoiceProcessingSpeechActivityEvent).

/// A change of speech activity heard while the voice-processed input is muted (cf.
/// AVAudioVoiceProcessingSpeechActivityEvent), given to the block of
/// ``AudioInputNode/setMutedSpeechActivityEventListener(_:)``.
public enum AudioVoiceProcessingSpeechActivityEvent: Int, Sendable {
    /// Speech started (Apple's raw value 0).
    case started = 0
    /// Speech ended (Apple's raw value 1).
    case ended = 1
}
