// The sample types of AVFAudio's common PCM formats (AVAudioCommonFormat).

/// The common PCM sample types an ``AudioFormat`` can name, as `AVAudioCommonFormat` (same
/// cases, same raw values).
///
/// Thread safety: a value type.
public enum AudioCommonFormat: UInt, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Anything else: here, packed 24-bit integers (a file's samples, never a buffer's).
    case otherFormat = 0
    /// Native-endian 32-bit floats: the standard format.
    case pcmFormatFloat32 = 1
    /// Native-endian 64-bit floats.
    case pcmFormatFloat64 = 2
    /// Signed 16-bit native-endian integers.
    case pcmFormatInt16 = 3
    /// Signed 32-bit native-endian integers.
    case pcmFormatInt32 = 4

    /// The core's sample type for a PCM common format; nil for `.otherFormat`.
    public var sampleType: SampleType? {
        switch self {
        case .otherFormat: return nil
        case .pcmFormatFloat32: return .float32
        case .pcmFormatFloat64: return .float64
        case .pcmFormatInt16: return .int16
        case .pcmFormatInt32: return .int32
        }
    }

    /// The common format of a core sample type (`.otherFormat` for `int24`).
    public init(_ sampleType: SampleType) {
        switch sampleType {
        case .float32: self = .pcmFormatFloat32
        case .float64: self = .pcmFormatFloat64
        case .int16: self = .pcmFormatInt16
        case .int32: self = .pcmFormatInt32
        case .int24: self = .otherFormat
        }
    }

    /// `Float32`, `Float64`, `Int16`, `Int32` or `other`, as AVFAudio prints formats.
    public var description: String {
        switch self {
        case .otherFormat: return "other"
        case .pcmFormatFloat32: return "Float32"
        case .pcmFormatFloat64: return "Float64"
        case .pcmFormatInt16: return "Int16"
        case .pcmFormatInt32: return "Int32"
        }
    }
}
