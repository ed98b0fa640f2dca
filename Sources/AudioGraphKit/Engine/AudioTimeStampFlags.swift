// CoreAudio's AudioTimeStampFlags: which fields of an AudioTimeStamp hold a value.

/// Which fields of an ``AudioTimeStamp`` are valid, as CoreAudio's `AudioTimeStampFlags` (same
/// names and bit values).
///
/// Thread safety: a value type.
public struct AudioTimeStampFlags: OptionSet, Sendable, Hashable {
    /// The bits, as CoreAudio's `UInt32` flags.
    public let rawValue: UInt32

    /// Flags from their bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `mSampleTime` is valid.
    public static let sampleTimeValid = AudioTimeStampFlags(rawValue: 1 << 0)
    /// `mHostTime` is valid.
    public static let hostTimeValid = AudioTimeStampFlags(rawValue: 1 << 1)
    /// `mRateScalar` is valid.
    public static let rateScalarValid = AudioTimeStampFlags(rawValue: 1 << 2)
    /// `mWordClockTime` is valid.
    public static let wordClockTimeValid = AudioTimeStampFlags(rawValue: 1 << 3)
    /// SMPTE time would be valid (the Linux definition has no SMPTE field).
    public static let smpteTimeValid = AudioTimeStampFlags(rawValue: 1 << 4)
    /// Sample time and host time are both valid.
    public static let sampleHostTimeValid: AudioTimeStampFlags = [.sampleTimeValid, .hostTimeValid]
}
