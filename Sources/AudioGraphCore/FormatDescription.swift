// A partial stream format as written in a graph file (missing fields are filled by propagation).

/// A format with every field optional: `{ "sampleRate": 44100, "channels": 2, "sampleType":
/// "float32", "interleaved": false }`.
///
/// Thread safety: a value type; safe to share between threads.
public struct FormatDescription: Sendable, Hashable {
    /// Frames per second (> 0), or nil for "as propagated".
    public var sampleRate: Double?
    /// Channel count (1...``FormatDescription/maximumChannelCount``), or nil.
    public var channels: Int?
    /// Sample type, or nil.
    public var sampleType: SampleType?
    /// Whether samples are interleaved, or nil.
    public var interleaved: Bool?

    /// The largest channel count the loader accepts anywhere.
    public static let maximumChannelCount = 256

    /// Creates a partial format.
    public init(sampleRate: Double? = nil, channels: Int? = nil, sampleType: SampleType? = nil, interleaved: Bool? = nil) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleType = sampleType
        self.interleaved = interleaved
    }

    /// Whether no field is set.
    public var isEmpty: Bool { sampleRate == nil && channels == nil && sampleType == nil && interleaved == nil }

    /// `base` with this description's fields laid over it.
    package func applied(to base: BusFormat) -> BusFormat {
        BusFormat(sampleRate: sampleRate ?? base.sampleRate, channels: channels ?? base.channels,
                  sampleType: sampleType ?? base.sampleType, interleaved: interleaved ?? base.interleaved)
    }
}

extension FormatDescription {
    /// The same fields as an engine ``PartialStreamFormat``.
    public var partialStreamFormat: PartialStreamFormat {
        PartialStreamFormat(sampleRate: sampleRate, channelCount: channels, sampleType: sampleType, isInterleaved: interleaved)
    }
}
