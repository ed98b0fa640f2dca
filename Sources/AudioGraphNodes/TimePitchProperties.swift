// The `properties` of a `timePitch` node: its stretch engine.
import AudioGraphCore

/// `properties` of a `timePitch` node: `quality`, the stretch engine (``TimePitchQuality``,
/// default `finer`), chosen when the node is set up (like the `overlap` parameter).
///
/// Thread safety: a value type; safe to share between threads.
public struct TimePitchProperties: Sendable, Hashable {
    /// The stretch engine (default ``TimePitchQuality/finer``).
    public var quality: TimePitchQuality

    /// Creates properties.
    public init(quality: TimePitchQuality = .default) {
        self.quality = quality
    }
}
