// The PulseAudio output node's properties.

/// `properties` of an `output` node (PulseAudio playback).
///
/// Thread safety: a value type; safe to share between threads.
public struct OutputProperties: Sendable, Hashable {
    /// The sink's name (nil: the server's default sink).
    public var device: String?
    /// Target latency, milliseconds (default 20).
    public var latency: Double
    /// The stream's name shown by PulseAudio (nil: the application's choice).
    public var streamName: String?

    /// Creates properties.
    public init(device: String? = nil, latency: Double = 20, streamName: String? = nil) {
        self.device = device
        self.latency = latency
        self.streamName = streamName
    }
}
