// Stream formats: sample rate, channel count, sample type and interleaving, as values.

/// The numeric type of one sample at the edges of the graph (files, client formats, converters).
///
/// Inside the graph every bus carries canonical non-interleaved `Float` buffers; the other types
/// exist where audio enters or leaves (a file, a generic output's client format, a converter).
public enum SampleType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case float32, float64, int16, int24, int32

    /// Bytes per sample in a packed file or client buffer.
    public var bytesPerSample: Int {
        switch self {
        case .float32, .int32: return 4
        case .float64: return 8
        case .int16: return 2
        case .int24: return 3
        }
    }

    public var description: String { rawValue }
}

/// A complete stream format (`AudioStreamBasicDescription` reduced to what we use).
///
/// Thread safety: a value type; safe to copy anywhere.
public struct StreamFormat: Hashable, Sendable, CustomStringConvertible {
    public var sampleRate: Double
    public var channelCount: Int
    public var sampleType: SampleType
    public var isInterleaved: Bool

    public init(sampleRate: Double, channelCount: Int, sampleType: SampleType = .float32,
                isInterleaved: Bool = false) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleType = sampleType
        self.isInterleaved = isInterleaved
    }

    /// The graph's internal format: non-interleaved 32-bit float.
    public static func canonical(sampleRate: Double, channelCount: Int) -> StreamFormat {
        StreamFormat(sampleRate: sampleRate, channelCount: channelCount)
    }

    /// Whether this is the internal format (non-interleaved float32).
    public var isCanonical: Bool { sampleType == .float32 && !isInterleaved }

    /// The same rate and channel count in the internal format.
    public var canonical: StreamFormat { .canonical(sampleRate: sampleRate, channelCount: channelCount) }

    /// Whether the fields are usable: a positive finite rate and at least one channel.
    public var isValid: Bool { sampleRate.isFinite && sampleRate > 0 && channelCount >= 1 && channelCount <= 1024 }

    /// `48000 Hz, 2 ch, float32, non-interleaved`.
    public var description: String {
        "\(ParameterInfo.format(sampleRate)) Hz, \(channelCount) ch, \(sampleType)"
            + (isInterleaved ? ", interleaved" : ", non-interleaved")
    }
}

/// A format with some fields left open, filled in by propagation at initialize.
public struct PartialStreamFormat: Hashable, Sendable {
    public var sampleRate: Double?
    public var channelCount: Int?
    public var sampleType: SampleType?
    public var isInterleaved: Bool?

    public init(sampleRate: Double? = nil, channelCount: Int? = nil, sampleType: SampleType? = nil,
                isInterleaved: Bool? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleType = sampleType
        self.isInterleaved = isInterleaved
    }

    /// This format's fields where set, `base`'s elsewhere.
    public func filled(from base: StreamFormat) -> StreamFormat {
        StreamFormat(sampleRate: sampleRate ?? base.sampleRate,
                     channelCount: channelCount ?? base.channelCount,
                     sampleType: sampleType ?? base.sampleType,
                     isInterleaved: isInterleaved ?? base.isInterleaved)
    }

    /// Whether no field is set.
    public var isEmpty: Bool { sampleRate == nil && channelCount == nil && sampleType == nil && isInterleaved == nil }
}

extension StreamFormat {
    /// The largest ratio between two rates one conversion bridges, either way (libsamplerate's
    /// limit, which the nodes' resampler enforces and the graph-file checker reports).
    public static let maximumConversionRatio = 256.0
}
