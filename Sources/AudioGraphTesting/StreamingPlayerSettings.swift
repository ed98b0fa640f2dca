// Lowering the file player's streaming threshold and ring size for a test, and putting them back.
import AudioGraphNodes

/// The process-wide streaming settings of `PlayerNode` as a test found them; `override` sets
/// new ones and `restore()` puts the old ones back (call it in `tearDown`).
///
/// Typical use: `settings = StreamingPlayerSettings.override(threshold: 0, ringFrames: 1 << 15)`
/// in `setUp` so that small files stream and wrap the ring often; `settings.restore()` in
/// `tearDown`.
///
/// Thread safety: the settings are atomics; call from the test's thread.
public struct StreamingPlayerSettings: Sendable {
    /// The settings before `override`.
    public let threshold: Double
    public let ringFrames: Int

    /// Records the current settings, then sets `threshold` (seconds; nil keeps it) and
    /// `ringFrames` (nil keeps it).
    public static func override(threshold: Double? = nil, ringFrames: Int? = nil) -> StreamingPlayerSettings {
        let saved = StreamingPlayerSettings(threshold: PlayerNode.streamingThreshold,
                                            ringFrames: PlayerNode.streamingRingFrames)
        if let threshold { PlayerNode.streamingThreshold = threshold }
        if let ringFrames { PlayerNode.streamingRingFrames = ringFrames }
        return saved
    }

    /// Puts the recorded settings back.
    public func restore() {
        PlayerNode.streamingThreshold = threshold
        PlayerNode.streamingRingFrames = ringFrames
    }
}
