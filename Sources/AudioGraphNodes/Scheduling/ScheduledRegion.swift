// One buffer or file segment queued on a ScheduledSoundPlayerNode: its samples, its place on the player timeline, its completion handler.
import Synchronization

/// A buffer or file segment scheduled on a ``ScheduledSoundPlayerNode`` (cf. a
/// `ScheduledAudioSlice` / `ScheduledAudioFileRegion` of Apple's AUScheduledSoundPlayer).
///
/// Created, filled and retained on the control thread, handed to the render thread through the
/// command ring as an `Unmanaged` pointer holding one retain (so the render thread never
/// releases it), handed back through the event ring when the render thread is done with it, and
/// released on the notifier thread. Its completion handler runs at most once
/// (``runCompletion()`` claims it atomically): when the notifier delivers its event, or earlier
/// when the player stops.
///
/// Thread safety: the `let` fields are immutable; ``start`` and ``end`` belong to the render
/// thread once the region is in the command ring; ``runCompletion()`` from any non-real-time
/// thread.
final class ScheduledRegion: @unchecked Sendable {
    // MARK: Immutable after init
    /// Scheduling order (sorts handlers run together by `stop()`).
    let serial: UInt64
    /// The buffer's samples (nil for a file segment).
    let samples: ChannelBufferList?
    /// Keeps the buffer's memory alive while scheduled.
    private let storage: ChannelBufferStorage?
    /// The disk streamer of a file segment (nil for a buffer or an empty segment).
    let streamer: FileStreamer?
    /// The file frames a segment plays.
    let segment: FileStreamer.Segment
    /// Frames of one pass.
    let length: Int64
    /// The player time requested with `at:` (`Int64.min`: after the previous region, or now).
    let requestedStart: Int64
    /// The buffer options.
    let options: ScheduledBufferOptions
    /// Whether the region repeats until interrupted (a looping buffer of at least one frame).
    let loops: Bool
    /// When the handler runs.
    let callbackType: ScheduledCompletionCallbackType
    private let completion: (@Sendable (ScheduledCompletionCallbackType) -> Void)?

    // MARK: Shared (atomic)
    private let completionClaimed = Atomic<Bool>(false)

    // MARK: Render thread only (once the region is in the command ring)
    /// First frame on the player timeline.
    var start: Int64 = 0
    /// One past the last frame on the player timeline (`Int64.max`: until interrupted).
    var end: Int64 = 0

    /// A buffer region.
    init(serial: UInt64, buffer: ChannelBufferStorage, frameCount: Int, at requestedStart: Int64?,
         options: ScheduledBufferOptions, callbackType: ScheduledCompletionCallbackType,
         completion: (@Sendable (ScheduledCompletionCallbackType) -> Void)?) {
        self.serial = serial
        storage = buffer
        samples = buffer.list
        streamer = nil
        segment = FileStreamer.Segment(start: 0, length: Int64(frameCount), loop: false)
        length = Int64(frameCount)
        self.requestedStart = requestedStart ?? .min
        self.options = options
        loops = options.contains(.loops) && frameCount > 0
        self.callbackType = callbackType
        self.completion = completion
    }

    /// A file-segment region (`streamer` nil for an empty segment).
    init(serial: UInt64, streamer: FileStreamer?, segment: FileStreamer.Segment, at requestedStart: Int64?,
         callbackType: ScheduledCompletionCallbackType,
         completion: (@Sendable (ScheduledCompletionCallbackType) -> Void)?) {
        self.serial = serial
        storage = nil
        samples = nil
        self.streamer = streamer
        self.segment = segment
        length = segment.length
        self.requestedStart = requestedStart ?? .min
        options = []
        loops = false
        self.callbackType = callbackType
        self.completion = completion
    }

    deinit {
        // The disk thread holds its streamer: stop and join it (off the render thread: regions are
        // released by the notifier or a control thread).
        streamer?.stop()
    }

    /// Runs the completion handler unless it already ran. Any non-real-time thread.
    func runCompletion() {
        guard !completionClaimed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        completion?(callbackType)
    }
}
