// The PulseAudio input node's properties.

/// `properties` of an `input` node (PulseAudio capture).
///
/// Thread safety: a value type; safe to share between threads.
public struct InputProperties: Sendable, Hashable {
    /// The source's name (nil: the server's default source).
    public var device: String?
    /// Captured channel count (default 2).
    public var channels: Int
    /// Target latency, milliseconds (default 20).
    public var latency: Double

    /// Creates properties.
    public init(device: String? = nil, channels: Int = 2, latency: Double = 20) {
        self.device = device
        self.channels = channels
        self.latency = latency
    }
}
