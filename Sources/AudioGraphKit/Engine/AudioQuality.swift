// AVAudioQuality without the prefix: encoder and sample-rate converter qualities.

/// Encoder and sample-rate converter qualities, as `AVAudioQuality` (same raw values).
///
/// Thread safety: a value type.
public enum AudioQuality: Int, Sendable, CaseIterable {
    /// Lowest: libsamplerate's linear interpolation for rate conversion.
    case min = 0
    /// libsamplerate's fastest sinc converter.
    case low = 0x20
    /// libsamplerate's medium sinc converter.
    case medium = 0x40
    /// libsoxr's high quality (the converter's default).
    case high = 0x60
    /// libsoxr's very high quality.
    case max = 0x7F
}
