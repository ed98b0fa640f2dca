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
    /// The captured channels the output bus carries, in output order (`[1]`: the right channel
    /// alone; `[1, 0]`: swapped); each in `0..<channels`. nil: all `channels` in order.
    public var channelMap: [Int]?

    /// Creates properties.
    public init(device: String? = nil, channels: Int = 2, latency: Double = 20, channelMap: [Int]? = nil) {
        self.device = device
        self.channels = channels
        self.latency = latency
        self.channelMap = channelMap
    }

    /// The output bus's channel count: the map's length, else `channels`.
    public var outputChannelCount: Int { channelMap?.count ?? channels }
}
