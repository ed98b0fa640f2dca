// The engine API's player of scheduled buffers and file segments (cf. AVAudioPlayerNode), over ScheduledSoundPlayerNode.
import AudioGraphRealtime
import AudioGraphNodes
import Foundation
import Synchronization

/// Plays buffers and segments of files scheduled on a player timeline (cf. AVAudioPlayerNode):
/// `at: nil` plays right after what was scheduled before (or at once), buffers may loop or
/// interrupt, completion handlers run when the data is consumed, rendered or played back, and
/// nothing plays before ``play()``. Times are `AudioTime`s: a schedule's `when` is player time,
/// `play(at:)`'s node time (sample times at any rate are converted to the player's; a time with
/// only a host time is placed through the engine's last render time).
///
/// The player's format is its output connection's (or the engine's before it is connected).
/// Buffers must have its channel count (their samples are copied when scheduled); files its
/// channel count — as on Apple's platforms, anything else is a programmer error, which stops
/// the program with one line naming the call, the player and the reason. A file at another
/// rate is converted, as Apple's player does: the segment is read and converted to the
/// player's rate when it is scheduled (libsoxr, high quality, time-aligned) and then plays as
/// a buffer — held in memory, so schedule long files at another rate in segments; a file at
/// the player's rate streams from disk. Volume, pan and
/// the 3D properties (``AudioMixing``) apply to the mixer or environment input it feeds.
///
/// Underneath, the engine's graph holds a ``ScheduledSoundPlayerNode`` (lock-free command ring
/// into the render thread, completion events out to a notifier thread, file segments streamed
/// by a disk thread). The engine stopping or resetting the player stops it (handlers run).
///
/// Thread safety: every method may be called from any non-real-time thread, including from a
/// completion handler. Handlers never run on the render thread.
public final class AudioPlayerNode: AudioNode, AudioMixing, @unchecked Sendable {
    /// The engine-level node: kept across graph builds while the format stays the same, so that
    /// what is scheduled before `start()` plays after it.
    private let scheduler = ControlLock<ScheduledSoundPlayerNode?>(nil)

    /// A player (attach it to an engine and connect it before scheduling).
    public init() {
        super.init(kindName: "player")
    }

    public override var numberOfInputs: Int { 0 }


    // MARK: Scheduling

    /// Schedules `buffer` after what was scheduled before; `completionHandler` runs once the
    /// player has consumed it, or when the player stops.
    public func scheduleBuffer(_ buffer: AudioPCMBuffer, completionHandler: AudioNodeCompletionHandler? = nil) {
        scheduleBuffer(buffer, at: nil, options: [], completionHandler: completionHandler)
    }

    /// Schedules `buffer` at player time `when` (nil: after what was scheduled before) with
    /// `options`; `completionHandler` runs once the player has consumed it, or when it stops.
    public func scheduleBuffer(_ buffer: AudioPCMBuffer, at when: AudioTime?, options: AudioPlayerNodeBufferOptions = [],
                               completionHandler: AudioNodeCompletionHandler? = nil) {
        schedule(buffer, when, options, .dataConsumed, Self.ignoringType(completionHandler),
                 call: "scheduleBuffer(_:at:options:completionHandler:)")
    }

    /// Schedules `buffer` after what was scheduled before; `completionHandler` runs as
    /// `callbackType` says, or when the player stops.
    public func scheduleBuffer(_ buffer: AudioPCMBuffer, completionCallbackType callbackType: AudioPlayerNodeCompletionCallbackType,
                               completionHandler: AudioPlayerNodeCompletionHandler? = nil) {
        schedule(buffer, nil, [], callbackType, completionHandler, call: "scheduleBuffer(_:completionCallbackType:completionHandler:)")
    }

    /// Schedules `buffer` at player time `when` (nil: after what was scheduled before) with
    /// `options`; `completionHandler` runs as `callbackType` says, or when the player stops.
    public func scheduleBuffer(_ buffer: AudioPCMBuffer, at when: AudioTime?, options: AudioPlayerNodeBufferOptions = [],
                               completionCallbackType callbackType: AudioPlayerNodeCompletionCallbackType,
                               completionHandler: AudioPlayerNodeCompletionHandler? = nil) {
        schedule(buffer, when, options, callbackType, completionHandler,
                 call: "scheduleBuffer(_:at:options:completionCallbackType:completionHandler:)")
    }

    /// Schedules the whole of `file` at player time `when` (nil: after what was scheduled
    /// before); `completionHandler` runs once the player has consumed it, or when it stops.
    public func scheduleFile(_ file: AudioFile, at when: AudioTime?, completionHandler: AudioNodeCompletionHandler? = nil) {
        schedule(file, 0, nil, when, .dataConsumed, Self.ignoringType(completionHandler),
                 call: "scheduleFile(_:at:completionHandler:)")
    }

    /// Schedules the whole of `file` at player time `when`; `completionHandler` runs as
    /// `callbackType` says, or when the player stops.
    public func scheduleFile(_ file: AudioFile, at when: AudioTime?, completionCallbackType callbackType: AudioPlayerNodeCompletionCallbackType,
                             completionHandler: AudioPlayerNodeCompletionHandler? = nil) {
        schedule(file, 0, nil, when, callbackType, completionHandler, call: "scheduleFile(_:at:completionCallbackType:completionHandler:)")
    }

    /// Schedules `numberFrames` frames of `file` from frame `startFrame` (clipped at its end) at
    /// player time `when`; `completionHandler` runs once the player has consumed them, or when it stops.
    public func scheduleSegment(_ file: AudioFile, startingFrame startFrame: AudioFramePosition, frameCount numberFrames: AudioFrameCount,
                                at when: AudioTime?, completionHandler: AudioNodeCompletionHandler? = nil) {
        schedule(file, startFrame, Int64(numberFrames), when, .dataConsumed, Self.ignoringType(completionHandler),
                 call: "scheduleSegment(_:startingFrame:frameCount:at:completionHandler:)")
    }

    /// Schedules `numberFrames` frames of `file` from frame `startFrame` at player time `when`;
    /// `completionHandler` runs as `callbackType` says, or when the player stops.
    public func scheduleSegment(_ file: AudioFile, startingFrame startFrame: AudioFramePosition, frameCount numberFrames: AudioFrameCount,
                                at when: AudioTime?, completionCallbackType callbackType: AudioPlayerNodeCompletionCallbackType,
                                completionHandler: AudioPlayerNodeCompletionHandler? = nil) {
        schedule(file, startFrame, Int64(numberFrames), when, callbackType, completionHandler,
                 call: "scheduleSegment(_:startingFrame:frameCount:at:completionCallbackType:completionHandler:)")
    }

    // MARK: Transport

    /// Starts or resumes playback at the next render slice (cf. `play(at: nil)`).
    public func play() { play(at: nil) }

    /// Starts or resumes playback at node time `when` (nil, or a time already passed: at once).
    public func play(at when: AudioTime?) {
        let s = activeScheduler(call: "play(at:)")
        s.outputPresentationLatency = outputPresentationLatency
        s.play(atSampleTime: when.flatMap { nodeSampleTime($0, rate: s.format.sampleRate) })
    }

    /// Pauses: the player time stops advancing; scheduled data waits.
    public func pause() {
        scheduler.withLock { $0 }?.pause()
    }

    /// Stops: clears every schedule (their completion handlers run, here), and returns the
    /// player time to 0.
    public func stop() {
        scheduler.withLock { $0 }?.stop()
    }

    /// Whether the player is playing.
    public var isPlaying: Bool { scheduler.withLock { $0 }?.isPlaying ?? false }

    /// Prepares scheduled file segments for playback (their disk buffers are filled when they
    /// are scheduled; segments scheduled afterwards buffer at least `2 × frameCount` frames).
    public func prepare(withFrameCount frameCount: AudioFrameCount) {
        activeScheduler(call: "prepare(withFrameCount:)").prepare(frameCount: Int(frameCount))
    }

    // MARK: Timelines

    /// The node time of `playerTime`, or nil when the player is not playing. The inverse of
    /// ``playerTime(forNodeTime:)``.
    public func nodeTime(forPlayerTime playerTime: AudioTime) -> AudioTime? {
        guard let s = scheduler.withLock({ $0 }), playerTime.isSampleTimeValid else { return nil }
        let rate = s.format.sampleRate
        guard let own = s.nodeTime(forPlayerTime: Self.convert(playerTime.sampleTime, from: playerTime.sampleRate, to: rate)) else {
            return nil
        }
        let node = ownTimeline(of: s, rate: rate).map { $0.engine + Int64((Double(own - $0.own) / $0.ratio).rounded()) } ?? own
        return time(sampleTime: node, rate: rate)
    }

    /// The player time of `nodeTime` (the engine's timeline, as `lastRenderTime` gives it), or
    /// nil when the player is not playing. It follows the frames the player rendered: behind a
    /// `timePitch` or `varispeed` at rate 2, it advances two seconds per second and reaches a
    /// file's end when the file has been played (the player renders on a timeline of its own
    /// there; `lastRenderTime` stays the engine's).
    public func playerTime(forNodeTime nodeTime: AudioTime) -> AudioTime? {
        guard let s = scheduler.withLock({ $0 }) else { return nil }
        let rate = s.format.sampleRate
        guard let node = nodeSampleTime(nodeTime, rate: rate) else { return nil }
        let own = ownTimeline(of: s, rate: rate).map { $0.own + Int64((Double(node - $0.engine) * $0.ratio).rounded()) } ?? node
        guard let player = s.playerTime(forNodeTime: own) else { return nil }
        return nodeTime.isHostTimeValid ? AudioTime(hostTime: nodeTime.hostTime, sampleTime: player, atRate: rate)
            : AudioTime(sampleTime: player, atRate: rate)
    }

    /// Where the player's own render timeline stands against the engine's, when they differ
    /// (the player renders behind a rate-changing node): the engine's last rendered frame, the
    /// player's, and the player frames per engine frame so far. Nil when the player renders on
    /// the engine's timeline (within 4096 frames: a live reading may be a quantum apart, a
    /// look-ahead a few slices) or has not rendered yet.
    private func ownTimeline(of s: ScheduledSoundPlayerNode, rate: Double) -> (engine: Int64, own: Int64, ratio: Double)? {
        guard let rendered = s.renderedEndSampleTime, let last = lastRenderTime, last.isSampleTimeValid else { return nil }
        let engine = Self.convert(last.sampleTime, from: last.sampleRate, to: rate)
        guard abs(rendered - engine) > 4096, engine > 0 else { return nil }
        // What the units downstream read ahead of what they output is rendered but not yet out.
        let own = max(0, rendered - Int64((downstreamReadAhead() * rate).rounded()))
        return (engine, own, min(32, max(1.0 / 32, Double(own) / Double(engine))))
    }

    /// Seconds of the player's audio that the units between it and the output read ahead of
    /// their output (a timePitch's start delay at its rate, a varispeed's reach), along the
    /// first connection of each bus.
    private func downstreamReadAhead() -> Double {
        guard let engine else { return 0 }
        return engine.withLock {
            var total = 0.0
            var node: AudioNode = self
            for _ in 0..<16 {
                guard let next = engine.connections.first(where: { $0.source === node })?.destination else { break }
                if let t = next as? AudioUnitTimePitch {
                    total += t.latency * Double(t.bypass ? 1 : t.rate)
                } else {
                    total += next.latency
                }
                node = next
            }
            return total
        }
    }

    // MARK: Engine hooks

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let s = scheduler(for: (outputFormat ?? engineFormat).canonical)
        s.prepare(frameCount: maximumFrames)
        return s
    }

    /// The player's state lives in its graph node: never swapped for a fresh one while running.
    override var canBeReplacedWhileRunning: Bool { false }

    override func engineWillStop() { stop() }

    override func engineWillReset() { stop() }

    /// Offline manual rendering, before each render: waits until the scheduled file segments'
    /// disk buffers hold what the render needs (the render itself never waits).
    func prepareForOfflineRender() {
        scheduler.withLock { $0 }?.prepareForOfflineRender()
    }

    // MARK: Internals

    /// The engine node for `format` and this node's id: the current one, else a new one (the
    /// old one stopped, so its handlers run).
    private func scheduler(for format: StreamFormat) -> ScheduledSoundPlayerNode {
        let (node, replaced) = scheduler.withLock { current -> (ScheduledSoundPlayerNode, ScheduledSoundPlayerNode?) in
            if let c = current, c.format == format, c.id == graphID { return (c, nil) }
            let fresh = ScheduledSoundPlayerNode(id: graphID, format: format)
            fresh.setOutputPresentationLatencyProvider { [weak self] in self?.currentOutputLatency() }
            let old = current
            current = fresh
            return (fresh, old)
        }
        if let replaced {
            replaced.stop()
            // Freeing it joins its notifier thread, which may be inside a handler waiting for the
            // engine's lock (held here when the engine rebuilds the node): let a short-lived
            // thread hold the last reference, after this call has returned.
            Thread {
                usleep(50_000)
                withExtendedLifetime(replaced) {}
            }.start()
        }
        return node
    }

    /// The engine node for the player's current output format (attached players only).
    private func activeScheduler(call: String) -> ScheduledSoundPlayerNode {
        guard engine != nil else { engineProgrammerError(call, self, "the player is not attached to an engine") }
        return scheduler(for: outputFormat(forBus: 0).streamFormat.canonical)
    }

    private func schedule(_ buffer: AudioPCMBuffer, _ when: AudioTime?, _ options: AudioPlayerNodeBufferOptions,
                          _ type: AudioPlayerNodeCompletionCallbackType, _ handler: AudioPlayerNodeCompletionHandler?, call: String) {
        let s = activeScheduler(call: call)
        guard Int(buffer.format.channelCount) == s.format.channelCount else {
            engineProgrammerError(call, self, "the buffer has \(buffer.format.channelCount) channels, the player \(s.format.channelCount)")
        }
        let frames = Int(buffer.frameLength)
        let storage = ChannelBufferStorage(channelCount: s.format.channelCount, capacity: frames)
        buffer.copyFrames(to: storage.list, destinationFrame: 0, fromFrame: 0, frameCount: frames)
        s.outputPresentationLatency = outputPresentationLatency
        do throws(ScheduledSoundPlayerError) {
            try s.scheduleBuffer(storage, frameCount: frames, at: playerSampleTime(when, rate: s.format.sampleRate),
                                 options: options.scheduled, callbackType: type.scheduled,
                                 completion: Self.engineHandler(handler))
        } catch {
            refused(error, call: call, type: type, handler: handler)
        }
    }

    private func schedule(_ file: AudioFile, _ start: Int64, _ frames: Int64?, _ when: AudioTime?,
                          _ type: AudioPlayerNodeCompletionCallbackType, _ handler: AudioPlayerNodeCompletionHandler?, call: String) {
        let s = activeScheduler(call: call)
        let fileFormat = file.processingFormat
        if fileFormat.sampleRate != s.format.sampleRate, Int(fileFormat.channelCount) == s.format.channelCount {
            // Another rate: converted here (libsoxr, high quality) and scheduled as a buffer.
            do throws(ScheduledSoundPlayerError) {
                let converted = try convertedSegment(of: file, start: start, frames: frames, to: s.format.sampleRate)
                schedule(converted, when, [], type, handler, call: call)
            } catch {
                refused(error, call: call, type: type, handler: handler)
            }
            return
        }
        s.outputPresentationLatency = outputPresentationLatency
        do throws(ScheduledSoundPlayerError) {
            try s.scheduleSegment(path: file.url.path, startingFrame: start, frameCount: frames,
                                  at: playerSampleTime(when, rate: s.format.sampleRate), callbackType: type.scheduled,
                                  completion: Self.engineHandler(handler))
        } catch {
            refused(error, call: call, type: type, handler: handler)
        }
    }

    /// Frames `start ..< start + frames` (nil: to the end; clipped there) of `file`, read through
    /// a reader of its own (the file's `framePosition` stays) and converted to `rate` with an
    /// ``AudioConverter`` at its default quality (libsoxr `SOXR_HQ`, time-aligned: output frame
    /// k is the file at time k / rate), `round(frames × rate / file rate)` frames long.
    private func convertedSegment(of file: AudioFile, start: Int64, frames: Int64?, to rate: Double) throws(ScheduledSoundPlayerError) -> AudioPCMBuffer {
        let path = file.url.path
        let reader: AudioFile
        do { reader = try AudioFile(forReading: file.url) } catch {
            throw .file(error as? AudioFileError ?? .ioFailed(path: path, reason: "\(error)"))
        }
        defer { reader.close() }
        let length = reader.length
        let wanted = frames ?? (length - start)
        guard start >= 0, start <= length, wanted >= 0 else {
            throw .segmentOutOfRange(path: path, startingFrame: start, frameCount: wanted, fileFrames: length)
        }
        let count = min(wanted, length - start)
        let inFormat = reader.processingFormat
        let outFormat = AudioFormat(standardFormatWithSampleRate: rate, channels: inFormat.channelCount)!
        let outFrames = Int64((Double(count) * rate / inFormat.sampleRate).rounded())
        guard let input = AudioPCMBuffer(pcmFormat: inFormat, frameCapacity: AudioFrameCount(max(1, count))),
              let output = AudioPCMBuffer(pcmFormat: outFormat, frameCapacity: AudioFrameCount(max(1, outFrames))),
              let converter = AudioConverter(from: inFormat, to: outFormat) else {
            throw .file(.formatMismatch(path: path, reason: "cannot convert \(inFormat) to \(outFormat)"))
        }
        reader.framePosition = start
        do { try reader.read(into: input, frameCount: AudioFrameCount(count)) } catch {
            throw .file(error as? AudioFileError ?? .ioFailed(path: path, reason: "\(error)"))
        }
        var supplied = false
        var conversionError: NSError?
        _ = converter.convert(to: output, error: &conversionError) { _, status in
            if supplied {
                status.pointee = .endOfStream
                return nil
            }
            supplied = true
            status.pointee = .haveData
            return input
        }
        if let conversionError {
            throw .file(.ioFailed(path: path, reason: "converting to \(ParameterInfo.format(rate)) Hz: \(conversionError.localizedDescription)"))
        }
        return output
    }

    // MARK: Refused schedules

    private let faults = ControlLock<(count: Int, last: ScheduledSoundPlayerError?)>((0, nil))

    /// Schedules refused at run time since the player was made (a Linux addition): a file that
    /// could not be read, more than ``ScheduledSoundPlayerNode/maximumScheduledRegions`` regions
    /// waiting. Nothing of a refused schedule plays; its completion handler still runs (at once,
    /// on another thread), so that code waiting for it goes on.
    public var scheduleFaultCount: Int { faults.withLock { $0.count } }

    /// The last refused schedule's reason (one line naming the file or the player), nil if none.
    public var lastScheduleFault: String? { faults.withLock { $0.last?.description } }

    /// A schedule the player refused: a runtime condition (unreadable file, too many regions) is
    /// counted and its handler run; a call that breaks the API's contract (a format, channel
    /// count or range the player cannot take, as on Apple's platforms) stops the program.
    private func refused(_ error: ScheduledSoundPlayerError, call: String, type: AudioPlayerNodeCompletionCallbackType,
                         handler: AudioPlayerNodeCompletionHandler?) {
        switch error {
        case .file, .tooManyScheduled:
            faults.withLock { $0 = ($0.count + 1, error) }
            if let handler {
                let box = UncheckedSendable(handler)  // Apple's handler type is not @Sendable
                Thread { box.value(type) }.start()
            }
        case .fileFormatMismatch, .channelCountMismatch, .frameCountOutOfRange, .segmentOutOfRange:
            engineProgrammerError(call, self, error.description)
        }
    }

    /// The output's latency now, for `.dataPlayedBack` handlers (the notifier asks every 10 ms):
    /// nil when the engine's lock is busy (never wait for it there), 0 when detached.
    private func currentOutputLatency() -> Double? {
        guard let engine else { return 0 }
        guard engine.lock.try() else { return nil }
        defer { engine.lock.unlock() }
        return engine.outputPresentationLatency
    }

    /// A schedule's `when` as a player sample time at `rate` (nil: after the previous region).
    private func playerSampleTime(_ when: AudioTime?, rate: Double) -> Int64? {
        guard let when else { return nil }
        if when.isSampleTimeValid { return Self.convert(when.sampleTime, from: when.sampleRate, to: rate) }
        guard let node = nodeSampleTime(when, rate: rate) else { return nil }
        return scheduler.withLock { $0 }?.playerTime(forNodeTime: node)
    }

    /// A node time as a sample time at `rate`: its sample time, else its host time placed
    /// through the engine's last render time (nil when neither works).
    private func nodeSampleTime(_ time: AudioTime, rate: Double) -> Int64? {
        if time.isSampleTimeValid { return Self.convert(time.sampleTime, from: time.sampleRate, to: rate) }
        guard time.isHostTimeValid, let last = lastRenderTime, last.isHostTimeValid, last.isSampleTimeValid else { return nil }
        let seconds = (Double(time.hostTime) - Double(last.hostTime)) / 1e9
        return Self.convert(last.sampleTime, from: last.sampleRate, to: rate) + Int64((seconds * rate).rounded())
    }

    /// An AudioTime for node sample time `sampleTime` at `rate`, with the host time extrapolated
    /// from the engine's last render time when there is one.
    private func time(sampleTime: Int64, rate: Double) -> AudioTime {
        guard let last = lastRenderTime, last.isHostTimeValid, last.isSampleTimeValid else {
            return AudioTime(sampleTime: sampleTime, atRate: rate)
        }
        let seconds = Double(sampleTime - Self.convert(last.sampleTime, from: last.sampleRate, to: rate)) / rate
        let host = Int64(last.hostTime) + Int64((seconds * 1e9).rounded())
        return AudioTime(hostTime: UInt64(max(0, host)), sampleTime: sampleTime, atRate: rate)
    }

    private static func ignoringType(_ handler: AudioNodeCompletionHandler?) -> AudioPlayerNodeCompletionHandler? {
        guard let handler else { return nil }
        return { _ in handler() }
    }

    private static func engineHandler(_ handler: AudioPlayerNodeCompletionHandler?) -> (@Sendable (ScheduledCompletionCallbackType) -> Void)? {
        guard let handler else { return nil }
        // Apple's handler type is not @Sendable: the notifier thread is the only one calling it.
        let box = UncheckedSendable(handler)
        return { box.value(AudioPlayerNodeCompletionCallbackType($0)) }
    }

    private static func convert(_ sampleTime: Int64, from: Double, to: Double) -> Int64 {
        from == to || from <= 0 ? sampleTime : Int64((Double(sampleTime) * to / from).rounded())
    }
}
