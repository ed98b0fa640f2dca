// When an AudioPlayerNode completion handler runs (cf. AVAudioPlayerNodeCompletionCallbackType).
import AudioGraphNodes

/// When a completion handler of ``AudioPlayerNode`` runs (cf.
/// AVAudioPlayerNodeCompletionCallbackType, the same raw values). Handlers run on a
/// non-real-time thread: the player's notifier thread, or the thread that calls `stop()`.
///
/// Thread safety: a value type.
public enum AudioPlayerNodeCompletionCallbackType: Int, Sendable, Hashable, CaseIterable {
    /// The data has been consumed by the player (taken by the render thread), or dropped.
    case dataConsumed = 0
    /// The data has been rendered (the render call that produced its last frame returned).
    case dataRendered = 1
    /// The data has been played back: its last frame has reached the output (render time plus
    /// the output's presentation latency).
    case dataPlayedBack = 2

    /// The engine node's callback type.
    var scheduled: ScheduledCompletionCallbackType { ScheduledCompletionCallbackType(rawValue: rawValue)! }

    /// The app-facing type of an engine node's callback type.
    init(_ type: ScheduledCompletionCallbackType) { self = AudioPlayerNodeCompletionCallbackType(rawValue: type.rawValue)! }
}
