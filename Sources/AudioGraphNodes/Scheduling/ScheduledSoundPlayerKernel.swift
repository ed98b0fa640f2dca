// Render side of a ScheduledSoundPlayerNode: the player timeline and the queue of scheduled buffers and file segments.

/// The render-side processor of a ``ScheduledSoundPlayerNode`` (cf. AUScheduledSoundPlayer).
///
/// At the start of each slice it drains the command ring (schedule, play, pause, stop) in the
/// order the control side pushed the commands, then renders the *player timeline*: while
/// playing, player time `p` is node time `p + anchor`; paused, player time stands still. Every
/// queued region covers `start..<end` of the player timeline and contributes the frames of the
/// slice that fall inside it (regions that overlap are summed, in scheduling order), so starts,
/// ends, loop points and interruptions are exact to the frame inside a slice and the output
/// does not depend on how the timeline is cut into slices.
///
/// A region that ends (or is dropped by an interruption or a stop) goes back to the notifier
/// through the event ring with the node time after its last frame and the host time at which
/// that frame is heard. File segments read from their ``FileStreamer`` ring; frames the disk
/// thread has not delivered play as silence and are counted.
///
/// Thread safety: render thread only after creation, except `deinit` (control thread: it
/// completes and releases the regions still queued).
final class ScheduledSoundPlayerKernel: NodeKernel, @unchecked Sendable {
    // MARK: Immutable after init
    private let shared: ScheduledPlayerShared
    /// The queue: `Unmanaged<ScheduledRegion>` pointers, each holding one retain.
    private let queue: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let queueCapacity: Int

    // MARK: Render thread only
    private var queueCount = 0
    private var playing = false
    /// Node time minus player time while playing.
    private var anchor: Int64 = 0
    /// The player time where playback resumes (paused) — 0 after a stop.
    private var base: Int64 = 0
    /// The node time at which the current play began (may lie inside a slice).
    private var playStart: Int64 = 0
    /// The end of the last region scheduled (`Int64.max` after a looping one), for `at: nil`.
    private var lastEnd: Int64 = 0
    private var hasPrevious = false
    /// This slice's host time (0 until needed).
    private var renderHostTime: UInt64 = 0

    init(node: ScheduledSoundPlayerNode, shared: ScheduledPlayerShared, maximumFramesPerSlice: Int) {
        self.shared = shared
        queueCapacity = shared.maximumRegions
        queue = .allocate(capacity: queueCapacity)
        queue.initialize(repeating: nil, count: queueCapacity)
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: [])
    }

    deinit {
        for k in 0..<queueCount {
            if let raw = queue[k] { shared.complete(shared.takeBack(raw)) }
        }
        queue.deinitialize(count: queueCapacity)
        queue.deallocate()
    }

    @inline(__always)
    private func region(_ k: Int) -> ScheduledRegion {
        Unmanaged<ScheduledRegion>.fromOpaque(queue[k]!).takeUnretainedValue()
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let s = context.sampleTime
        let n = context.frameCount
        renderHostTime = 0
        drainCommands(at: s, sampleRate: context.sampleRate)
        let sliceEnd = s + Int64(n)
        shared.renderedEnd.store(sliceEnd, ordering: .relaxed)
        guard playing, playStart < sliceEnd else {
            outputSilence(frameCount: n)
            return
        }
        let first = Int(max(0, playStart - s))
        // Player time of output frame 0, and the player times this slice plays.
        let origin = s - anchor
        let p0 = origin + Int64(first)
        let p1 = origin + Int64(n)
        let out = outputs[0]
        out.clear(frameCount: n)
        var audible = false
        var k = 0
        while k < queueCount {
            let r = region(k)
            let a = max(r.start, p0)
            let b = min(r.end, p1)
            if a < b {
                mix(r, from: a, count: Int(b - a), into: out, offset: Int(a - origin))
                audible = true
            }
            if r.end <= p1 {
                finish(k, offset: Int(max(r.end, p0) - origin), sliceStart: s, sampleRate: context.sampleRate)
                continue
            }
            k += 1
        }
        outputIsSilent[0] = !audible
    }

    /// Adds `count` frames of region `r` from player time `a` into `out` at frame `offset`.
    @inline(__always)
    private func mix(_ r: ScheduledRegion, from a: Int64, count: Int, into out: ChannelBufferList, offset: Int) {
        if let samples = r.samples {
            let length = Int(r.length)
            var q = a - r.start
            if r.loops { q %= r.length }
            for c in 0..<out.channelCount {
                let dst = out.channel(c) + offset
                let src = samples.channel(c)
                var i = Int(q)
                for j in 0..<count {
                    dst[j] += src[i]
                    i += 1
                    if i == length { i = 0 }
                }
            }
        } else if let streamer = r.streamer {
            let got = min(count, streamer.acquire(position: a - r.start, segment: r.segment, version: 0, wanted: count))
            // Summed into the output (regions may overlap); read the ring directly, from the head
            // taken once, so that no per-sample access touches the streamer's mutable state.
            let head = streamer.headIndex
            let ring = streamer.ring
            for c in 0..<out.channelCount {
                let dst = out.channel(c) + offset
                for j in 0..<got { dst[j] += ring.sample(channel: c, at: head + j) }
            }
            streamer.consume(got)
            if got < count { shared.streamCounters.starvedFrames.add(Int64(count - got), ordering: .relaxed) }
        }
    }

    /// Removes region `k` and gives it back to the notifier: its last frame ends `offset` frames
    /// into the slice starting at node time `sliceStart`.
    private func finish(_ k: Int, offset: Int, sliceStart: Int64, sampleRate: Double) {
        let raw = queue[k]
        for j in k..<(queueCount - 1) { queue[j] = queue[j + 1] }
        queueCount -= 1
        queue[queueCount] = nil
        if renderHostTime == 0 { renderHostTime = ScheduledPlayerShared.hostTimeNow() }
        let latency = Double(bitPattern: shared.latencyBits.load(ordering: .relaxed))
        let delay = max(0, Double(offset) / sampleRate + latency)
        let due = renderHostTime &+ UInt64(delay * 1e9)
        // The event ring has room for every live region (see ScheduledPlayerShared.init).
        _ = shared.events.push(ScheduleRecord(kind: .finished, region: raw, time: sliceStart + Int64(offset), hostTime: due))
    }

    /// The player time the next frame plays at (node time `s` is the slice start).
    @inline(__always)
    private func currentPlayerTime(at s: Int64) -> Int64 {
        playing ? max(s, playStart) - anchor : base
    }

    private func drainCommands(at s: Int64, sampleRate: Double) {
        var taken: Int64 = 0
        while let command = shared.commands.pop() {
            taken += 1
            switch command.kind {
            case .schedule:
                if let raw = command.region { insert(raw, at: s, sampleRate: sampleRate) }
            case .play:
                guard !playing else { break }
                let t = command.time == .min ? s : max(command.time, s)
                playStart = t
                anchor = t - base
                playing = true
            case .pause:
                guard playing else { break }
                if s >= playStart { base = s - anchor }
                playing = false
            case .stop:
                while queueCount > 0 { finish(0, offset: 0, sliceStart: s, sampleRate: sampleRate) }
                playing = false
                base = 0
                lastEnd = 0
                hasPrevious = false
            case .finished:
                break
            }
        }
        if taken > 0 {
            shared.publishedAnchor.store(anchor, ordering: .relaxed)
            shared.appliedCommands.add(taken, ordering: .releasing)
        }
    }

    /// Places a newly scheduled region on the player timeline (and applies its interruption).
    private func insert(_ raw: UnsafeMutableRawPointer, at s: Int64, sampleRate: Double) {
        let r = Unmanaged<ScheduledRegion>.fromOpaque(raw).takeUnretainedValue()
        let now = currentPlayerTime(at: s)
        let requested: Int64? = r.requestedStart == .min ? nil : r.requestedStart
        let start: Int64
        if r.options.contains(.interrupts) || r.options.contains(.interruptsAtLoop) {
            let reference = requested ?? now
            var point = reference
            if !r.options.contains(.interrupts) {
                // At the loop point (or the end) of the region playing at the reference time.
                var k = queueCount - 1
                while k >= 0 {
                    let c = region(k)
                    if c.start <= reference && c.end > reference {
                        if c.end == .max && c.loops {
                            let into = reference - c.start
                            point = c.start + (into + c.length - 1) / c.length * c.length
                        } else {
                            point = c.end
                        }
                        break
                    }
                    k -= 1
                }
            }
            var k = 0
            while k < queueCount {
                let c = region(k)
                if c.start >= point {
                    finish(k, offset: 0, sliceStart: s, sampleRate: sampleRate)
                    continue
                }
                if c.end > point { c.end = point }
                k += 1
            }
            start = point
        } else {
            start = requested ?? (hasPrevious ? max(lastEnd, now) : now)
        }
        r.start = start
        r.end = r.loops || start > Int64.max - r.length ? .max : start + r.length
        lastEnd = r.end
        hasPrevious = true
        if queueCount == queueCapacity {
            // Cannot happen (the control side limits live regions); never overflow.
            _ = shared.events.push(ScheduleRecord(kind: .finished, region: raw, time: s, hostTime: 0))
            return
        }
        queue[queueCount] = raw
        queueCount += 1
    }
}
