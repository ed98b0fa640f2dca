// A player of scheduled buffers and file segments on its own timeline (the engine node behind AudioPlayerNode).
import AudioGraphRealtime
import Synchronization

/// Plays buffers and file segments scheduled on a *player timeline*, gaplessly and exact to the
/// frame — the engine-level node behind AVAudioPlayerNode (cf. Apple's AUScheduledSoundPlayer /
/// AUAudioFilePlayer). Times are `Int64` sample times at the node's rate.
///
/// * **Timelines.** Node time is the node's render timeline (the graph's sample time, or behind
///   a rate-converting input its upstream timeline). Player time starts at 0, advances only
///   while the player plays (``play(atSampleTime:)`` … ``pause()``), and returns to 0 at
///   ``stop()``. ``playerTime(forNodeTime:)`` and ``nodeTime(forPlayerTime:)`` convert while
///   playing and return nil otherwise (and until the render thread has started the playback,
///   at most one slice after `play`).
/// * **Scheduling** (`at:` is player time): nil plays right after the region scheduled before
///   (or, when there was none or it has ended, at the player time the next slice starts — 0 for
///   a player that never played). A region whose time has already passed plays its remaining
///   frames (the past part is skipped, as AUScheduledSoundPlayer does with late slices).
///   Regions that overlap are summed. ``ScheduledBufferOptions`` loop and interrupt buffers.
/// * **Before `play`** nothing renders: scheduled data waits. ``stop()`` drops every region and
///   runs every pending completion handler (on the calling thread) at once.
/// * **Completion handlers** run on the node's notifier thread (created by the first schedule
///   call), never on the render thread, once per region: ``ScheduledCompletionCallbackType``.
///   `.dataPlayedBack` waits for ``outputPresentationLatency`` (set it from the output's latency;
///   0 offline).
/// * **Files** must have the player's rate and channel count (AVAudioPlayerNode requires the
///   file's processing format to match). A segment is not decoded into memory: a
///   ``FileStreamer`` reads it on a disk thread into a lock-free ring, filled (prerolled) on the
///   scheduling thread; offline renderers call ``prepareForOfflineRender()`` between slices so
///   the render never finds the ring short.
///
/// Output: `format` (non-interleaved float; its rate and channel count); no parameters (volume
/// and pan belong to the mixer input it feeds). Changes reach the render thread through a
/// lock-free command ring drained at each slice start; a region is created and released off the
/// render thread.
///
/// Thread safety: every method may be called from any non-real-time thread (calls are
/// serialised by a `ControlLock` the render thread never takes), including from a completion handler.
/// The schedule calls may do file I/O (opening and prerolling a segment).
/// ``prepareForOfflineRender()`` blocks; call it only from the thread that renders, between renders.
public final class ScheduledSoundPlayerNode: GraphNode, @unchecked Sendable {
    /// The output format (rate and channel count of everything the player plays).
    public let format: StreamFormat

    /// Buffers and segments that may be scheduled and not yet finished at once.
    public static let maximumScheduledRegions = 256

    /// Frames of the disk ring of each file segment scheduled afterwards (at least 32 768;
    /// default 65 536, more after ``prepare(frameCount:)`` asks for more). Any thread.
    package static var streamingRingFrames: Int {
        get { streamingRingFramesValue.load(ordering: .relaxed) }
        set { streamingRingFramesValue.store(newValue, ordering: .relaxed) }
    }
    private static let streamingRingFramesValue = Atomic<Int>(1 << 16)

    let shared: ScheduledPlayerShared

    // MARK: Control threads (under `control`)
    private struct ControlState {
        var isPlaying = false
        var nextSerial: UInt64 = 0
        /// Commands pushed so far, and the count after the last `play` (its serial).
        var commandsPushed: Int64 = 0
        var playSerial: Int64 = 0
        var notifier: CompletionNotifier?
        var prerollFrames = 0
    }
    private let control = ControlLock(ControlState())

    /// A player whose output has `format`'s rate and channel count.
    public init(id: String, format: StreamFormat) {
        self.format = format.canonical
        shared = ScheduledPlayerShared(maximumRegions: Self.maximumScheduledRegions)
        super.init(id: id, typeName: "scheduledSoundPlayer", inputBusCount: 0, outputBusCount: 1, parameters: [],
                   declaredFormat: PartialStreamFormat(sampleRate: format.sampleRate, channelCount: format.channelCount))
    }

    deinit {
        let notifier = control.withLock { s -> CompletionNotifier? in
            let n = s.notifier
            s.notifier = nil
            return n
        }
        notifier?.stop()
    }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        [format]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        ScheduledSoundPlayerKernel(node: self, shared: shared, maximumFramesPerSlice: maximumFramesPerSlice)
    }

    // MARK: State

    /// Whether the player plays (true from ``play(atSampleTime:)`` until ``pause()`` or ``stop()``).
    public var isPlaying: Bool { control.withLock { $0.isPlaying } }

    /// Seconds between the render of a frame and the moment it is heard (the output's latency),
    /// which `.dataPlayedBack` handlers wait for. 0 by default (offline). Any thread.
    public var outputPresentationLatency: Double {
        get { Double(bitPattern: shared.latencyBits.load(ordering: .relaxed)) }
        set { shared.latencyBits.store(max(0, newValue.isFinite ? newValue : 0).bitPattern, ordering: .relaxed) }
    }

    /// Where the output latency comes from while the node lives: the notifier thread calls it
    /// every 10 ms and stores what it returns in ``outputPresentationLatency`` (nil: it could not
    /// tell without waiting; keep the last value). The engine sets it to its output's reported
    /// latency. Any thread; the closure runs on the notifier thread, never the render thread.
    public func setOutputPresentationLatencyProvider(_ provider: (@Sendable () -> Double?)?) {
        shared.latencyProvider.withLock { $0 = provider }
    }

    /// Frames of file segments that played as silence because the disk thread had not read them yet. Any thread.
    public var streamStarvedFrames: Int64 { shared.streamCounters.starvedFrames.load(ordering: .relaxed) }

    /// Failed or short reads of scheduled files (their frames play as silence). Any thread.
    public var streamReadFailures: Int64 { shared.streamCounters.readFailures.load(ordering: .relaxed) }

    /// The notifier thread's `pthread_self()`, 0 before the first schedule. Tests check handlers run there.
    var testOnly_notifierThreadID: UInt {
        control.withLock { $0.notifier?.threadID.load(ordering: .acquiring) ?? 0 }
    }

    // MARK: Scheduling

    /// Schedules `frameCount` frames (nil: all) of `buffer` at player time `at` (nil: after the
    /// previous region). The buffer is played from its memory, not copied: do not change it
    /// while it is scheduled. `completion` runs once, as `callbackType` says, or at ``stop()``.
    public func scheduleBuffer(_ buffer: ChannelBufferStorage, frameCount: Int? = nil, at time: Int64? = nil,
                               options: ScheduledBufferOptions = [],
                               callbackType: ScheduledCompletionCallbackType = .dataConsumed,
                               completion: (@Sendable (ScheduledCompletionCallbackType) -> Void)? = nil) throws(ScheduledSoundPlayerError) {
        guard buffer.list.channelCount == format.channelCount else {
            throw .channelCountMismatch(node: id, bufferChannels: buffer.list.channelCount, playerChannels: format.channelCount)
        }
        let frames = frameCount ?? buffer.list.capacity
        guard frames >= 0 && frames <= buffer.list.capacity else {
            throw .frameCountOutOfRange(node: id, frameCount: frames, capacity: buffer.list.capacity)
        }
        try enqueue { serial in
            ScheduledRegion(serial: serial, buffer: buffer, frameCount: frames, at: time, options: options,
                            callbackType: callbackType, completion: completion)
        }
    }

    /// Schedules the whole file at `path` at player time `at` (nil: after the previous region).
    public func scheduleFile(path: String, at time: Int64? = nil,
                             callbackType: ScheduledCompletionCallbackType = .dataConsumed,
                             completion: (@Sendable (ScheduledCompletionCallbackType) -> Void)? = nil) throws(ScheduledSoundPlayerError) {
        try scheduleSegment(path: path, startingFrame: 0, frameCount: nil, at: time, callbackType: callbackType,
                            completion: completion)
    }

    /// Schedules `frameCount` frames (nil: to the end; clipped at the end) of the file at `path`
    /// from file frame `startingFrame`, at player time `at` (nil: after the previous region).
    /// Opens the file and fills its disk ring here; the rest streams on a disk thread.
    public func scheduleSegment(path: String, startingFrame: Int64, frameCount: Int64?, at time: Int64? = nil,
                                callbackType: ScheduledCompletionCallbackType = .dataConsumed,
                                completion: (@Sendable (ScheduledCompletionCallbackType) -> Void)? = nil) throws(ScheduledSoundPlayerError) {
        let info: AudioFileInfo
        do { info = try AudioFileReader.info(path: path) } catch { throw .file(error) }
        guard info.sampleRate == format.sampleRate && info.channels == format.channelCount else {
            throw .fileFormatMismatch(path: path, fileSampleRate: info.sampleRate, fileChannels: info.channels,
                                      playerSampleRate: format.sampleRate, playerChannels: format.channelCount)
        }
        let wanted = frameCount ?? (info.frames - startingFrame)
        guard startingFrame >= 0 && startingFrame <= info.frames && wanted >= 0 else {
            throw .segmentOutOfRange(path: path, startingFrame: startingFrame, frameCount: wanted, fileFrames: info.frames)
        }
        let segment = FileStreamer.Segment(start: startingFrame, length: min(wanted, info.frames - startingFrame), loop: false)
        var streamer: FileStreamer?
        if segment.length > 0 {
            let preroll = control.withLock { $0.prerollFrames }
            do {
                streamer = try FileStreamer(path: path, segment: segment, version: 0,
                                            capacity: max(Self.streamingRingFrames, 2 * preroll),
                                            counters: shared.streamCounters)
            } catch {
                throw .file(error)
            }
        }
        do {
            try enqueue { serial in
                ScheduledRegion(serial: serial, streamer: streamer, segment: segment, at: time, callbackType: callbackType,
                                completion: completion)
            }
        } catch {
            streamer?.stop()
            throw error
        }
    }

    /// Registers a region and hands it to the render thread (or throws, nothing scheduled).
    private func enqueue(_ make: (UInt64) -> ScheduledRegion) throws(ScheduledSoundPlayerError) {
        try control.withLock { (s: inout ControlState) throws(ScheduledSoundPlayerError) in
            guard shared.liveRegions.load(ordering: .relaxed) < shared.maximumRegions else {
                throw .tooManyScheduled(node: id, limit: shared.maximumRegions)
            }
            if s.notifier == nil { s.notifier = try CompletionNotifier(shared: shared) }
            s.nextSerial += 1
            let region = make(s.nextSerial)
            shared.pending.withLock { $0[ObjectIdentifier(region)] = region }
            shared.liveRegions.add(1, ordering: .relaxed)
            let raw = Unmanaged.passRetained(region).toOpaque()
            if push(ScheduleRecord(kind: .schedule, region: raw), &s) { return }
            // The ring holds 4× the live-region limit; only stray play/pause calls can fill it.
            shared.pending.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(region)) }
            _ = shared.takeBack(raw)
            throw .tooManyScheduled(node: id, limit: shared.maximumRegions)
        }
    }

    /// Pushes a command (under the control lock). False when the ring is full (it holds four
    /// times the region limit of commands the render thread has not taken).
    private func push(_ record: ScheduleRecord, _ s: inout ControlState) -> Bool {
        guard shared.commands.push(record) else { return false }
        s.commandsPushed += 1
        return true
    }

    // MARK: Transport

    /// Starts or resumes playback at node time `sampleTime` (nil, or a time already passed:
    /// at the next slice). Does nothing while playing.
    public func play(atSampleTime sampleTime: Int64? = nil) {
        control.withLock { s in
            guard !s.isPlaying else { return }
            guard push(ScheduleRecord(kind: .play, time: sampleTime ?? .min), &s) else { return }
            s.isPlaying = true
            s.playSerial = s.commandsPushed
        }
    }

    /// Pauses at the next slice: player time stops advancing, scheduled data waits.
    public func pause() {
        control.withLock { s in
            guard s.isPlaying else { return }
            if push(ScheduleRecord(kind: .pause), &s) { s.isPlaying = false }
        }
    }

    /// Stops: drops every scheduled region, runs every pending completion handler (here, in
    /// scheduling order, before returning) and returns the player timeline to 0.
    public func stop() {
        let regions = control.withLock { s -> [ScheduledRegion] in
            s.isPlaying = false
            let all = shared.pending.withLock { p -> [ScheduledRegion] in
                let v = Array(p.values)
                p.removeAll()
                return v
            }
            if kernel == nil {
                // Nothing renders: take the commands back here (the render thread is not running).
                var taken: Int64 = 0
                while let r = shared.commands.pop() {
                    taken += 1
                    if let raw = r.region { _ = shared.takeBack(raw) }
                }
                shared.appliedCommands.add(taken, ordering: .releasing)
            } else {
                _ = push(ScheduleRecord(kind: .stop), &s)
            }
            return all
        }
        for r in regions.sorted(by: { $0.serial < $1.serial }) { r.runCompletion() }
    }

    /// Prepares scheduled file segments for playback: the disk rings of segments scheduled from
    /// now on hold at least `2 × frameCount` frames. Segments are already prerolled (their ring
    /// filled) when they are scheduled, so nothing waits here.
    public func prepare(frameCount: Int) {
        control.withLock { $0.prerollFrames = max($0.prerollFrames, frameCount) }
    }

    // MARK: Timelines

    /// The player time of node time `nodeTime`, or nil when the player is not playing (or the
    /// render thread has not started the playback yet).
    public func playerTime(forNodeTime nodeTime: Int64) -> Int64? {
        anchorWhilePlaying().map { nodeTime - $0 }
    }

    /// The node time of player time `playerTime`, or nil when the player is not playing (or the
    /// render thread has not started the playback yet).
    public func nodeTime(forPlayerTime playerTime: Int64) -> Int64? {
        anchorWhilePlaying().map { playerTime + $0 }
    }

    /// The end of the last slice the player rendered on its own timeline (behind a
    /// rate-changing node, e.g. a varispeed at rate 2, it advances that many frames per graph
    /// frame), nil before the first. Any thread; a reading may be one slice old.
    public var renderedEndSampleTime: Int64? {
        let end = shared.renderedEnd.load(ordering: .relaxed)
        return end < 0 ? nil : end
    }

    private func anchorWhilePlaying() -> Int64? {
        control.withLock { s -> Int64? in
            guard s.isPlaying, shared.appliedCommands.load(ordering: .acquiring) >= s.playSerial else { return nil }
            return shared.publishedAnchor.load(ordering: .relaxed)
        }
    }

    // MARK: Offline rendering

    /// For offline rendering: every scheduled file segment's streamer stops its disk thread and
    /// is read by the rendering thread itself from then on (``FileStreamer/enterSynchronousMode()``),
    /// exactly as much as each render needs, so an offline render never waits for another thread
    /// and reads no file region twice. Call it from the thread that renders, between two renders
    /// (before each one: segments scheduled later get the same treatment).
    public func prepareForOfflineRender() {
        let regions = shared.pending.withLock { Array($0.values) }
        for r in regions { r.streamer?.enterSynchronousMode() }
    }
}
