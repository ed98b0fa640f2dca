// When a ScheduledSoundPlayerNode's completion handler runs (cf. AVAudioPlayerNodeCompletionCallbackType).

/// When the completion handler of a scheduled buffer, file or segment runs (cf.
/// `AVAudioPlayerNodeCompletionCallbackType`; the same raw values).
///
/// Handlers always run on a non-real-time thread: the node's notifier thread, or the thread
/// that calls ``ScheduledSoundPlayerNode/stop()`` (which runs every pending handler at once).
///
/// Thread safety: a value type.
public enum ScheduledCompletionCallbackType: Int, Sendable, Hashable, CaseIterable {
    /// The render thread has taken the region's last frame (here: in the render call that
    /// rendered it, so in practice together with ``dataRendered``), or the region was dropped.
    case dataConsumed = 0
    /// The render call that produced the region's last frame has returned.
    case dataRendered = 1
    /// The region's last frame has been heard: the host time of its render call, plus the
    /// frame's offset in that slice, plus the node's `outputPresentationLatency` has passed.
    case dataPlayedBack = 2
}
