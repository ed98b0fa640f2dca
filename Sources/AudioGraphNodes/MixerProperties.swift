// The mixer node's properties.

/// `properties` of a `mixer` node.
///
/// Thread safety: a value type; safe to share between threads.
public struct MixerProperties: Sendable, Hashable {
    /// Output channel count (default 2; stereo output pans, others up/down-mix).
    public var channels: Int

    /// Creates properties.
    public init(channels: Int = 2) { self.channels = channels }
}
