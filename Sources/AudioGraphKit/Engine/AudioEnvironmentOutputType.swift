// The output hardware an environment renders for (cf. AVAudioEnvironmentOutputType).

/// The type of output an ``AudioEnvironmentNode`` renders for (cf. AVAudioEnvironmentOutputType),
/// used with the `.auto` rendering algorithm: headphones get binaural (HRTF) point sources,
/// speakers equal-power panning. Linux does not detect the device: `.auto` renders for
/// headphones.
public enum AudioEnvironmentOutputType: Int, Sendable, CaseIterable {
    /// Chosen by the system (here: headphones).
    case auto = 0
    /// Headphones.
    case headphones = 1
    /// The device's own speakers.
    case builtInSpeakers = 2
    /// External speakers.
    case externalSpeakers = 3
}
