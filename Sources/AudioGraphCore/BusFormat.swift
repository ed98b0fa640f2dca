// A complete format of one bus after propagation (what `audiograph inspect` prints).

/// A fully resolved bus format, as a graph file's tools print it. Package access: applications
/// see formats as `AudioFormat` (AudioGraphKit), nodes as `StreamFormat`.
///
/// Thread safety: a value type; safe to share between threads.
package struct BusFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    package var sampleRate: Double
    /// Channel count.
    package var channels: Int
    /// Sample type (`float32` inside the graph).
    package var sampleType: SampleType
    /// Whether interleaved (false inside the graph).
    package var interleaved: Bool

    /// Creates a format; the defaults are the graph's canonical sample type and layout.
    package init(sampleRate: Double, channels: Int, sampleType: SampleType = .float32, interleaved: Bool = false) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleType = sampleType
        self.interleaved = interleaved
    }

    /// `48000 Hz, 2 ch, float32, non-interleaved`.
    package var description: String {
        "\(ParameterInfo.format(sampleRate)) Hz, \(channels) ch, \(sampleType.rawValue), \(interleaved ? "interleaved" : "non-interleaved")"
    }
}
