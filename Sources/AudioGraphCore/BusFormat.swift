// A complete format of one bus after propagation (what `audiograph inspect` prints).

/// A fully resolved bus format.
///
/// Thread safety: a value type; safe to share between threads.
public struct BusFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Double
    /// Channel count.
    public var channels: Int
    /// Sample type (`float32` inside the graph).
    public var sampleType: SampleType
    /// Whether interleaved (false inside the graph).
    public var interleaved: Bool

    /// Creates a format; the defaults are the graph's canonical sample type and layout.
    public init(sampleRate: Double, channels: Int, sampleType: SampleType = .float32, interleaved: Bool = false) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleType = sampleType
        self.interleaved = interleaved
    }

    /// `48000 Hz, 2 ch, float32, non-interleaved`.
    public var description: String {
        "\(ParameterInfo.format(sampleRate)) Hz, \(channels) ch, \(sampleType.rawValue), \(interleaved ? "interleaved" : "non-interleaved")"
    }
}
