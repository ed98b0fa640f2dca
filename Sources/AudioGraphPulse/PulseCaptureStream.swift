// Real-time capture from a PulseAudio source into a lock-free ring read slice by slice.
import AudioGraphRealtime
import CPulse
import CPulseShim
import Glibc
import Synchronization

/// Records float32 audio from a PulseAudio source (the default one or a named one, e.g. a sink's
/// `.monitor`) into a lock-free ring that the render side reads exactly N frames per slice.
///
/// ```
///  libpulse mainloop thread                         render thread (the graph's driver)
///  read callback: pa_stream_peek → ring.write  ──▶  read(frameCount:into:) → deinterleave
///  (ring full: the chunk's rest is dropped,         (ring short: silence for the rest,
///   overrunCount += 1)                               underrunCount += 1)
/// ```
/// The ring holds four times the target latency (at least eight slices and half a second). So
/// that the delay does not creep up when the two clocks drift, `read` drops the oldest frames when
/// more than the backlog limit are waiting (default: latency + two slices; `setBacklogLimit`;
/// counted in `droppedFrames`). In full duplex (after ``setWarmUp(frames:window:margin:)``) the
/// reads go through a ``CaptureDriftCompensator``, which steers their rate to the output's clock
/// while the ring's low water stays within reach of the margin, so that a small drift (a source
/// slower or faster than the sink by a few hundred ppm) neither runs the ring dry nor fills it;
/// a backlog beyond that reach (a faster source after a stall) is trimmed, counted in
/// `droppedFrames`, as before.
///
/// Thread safety: `start()`, `stop()`, `latency()`, `setFaultHandler` are control-thread calls
/// (one thread at a time, not from libpulse callbacks). `read(frameCount:into:)` and
/// `readableFrames` belong to one consumer thread (the render thread) and are real-time safe.
/// Counters and `fault` may be read from any thread. `stop()` is idempotent and done by `deinit`.
package final class PulseCaptureStream: @unchecked Sendable {
    /// The requested settings.
    package let configuration: PulseStreamConfiguration
    /// The connection the stream lives on.
    package let context: PulseContext

    // MARK: Immutable after init
    private let ring: RingBuffer
    private let latencyFrames: Int

    // MARK: Render (consumer) thread only
    private let scratch: UnsafeMutablePointer<Float>
    /// Full duplex (after a warm-up): reads at the output's pace when the source's clock differs.
    private let drift: CaptureDriftCompensator
    /// The warm-up being run (see ``setWarmUp(frames:window:margin:)``): frames still to read
    /// as silence, the window at its end whose lowest fill is watched, that lowest fill, and the
    /// fill the ring is trimmed to keep before each fragment.
    private var warmUp = (remaining: 0, window: 0, lowest: Int.max, margin: 0, hold: 0)
    /// Reads hand out silence without consuming until the ring holds this many frames (0: off).
    private var startAt = 0
    /// After a warm-up (full duplex): the ring's lowest fill is watched over windows of
    /// `window` frames read; when it stayed above the margin plus a tolerance (a quarter of it, at least 2.5 ms) for a whole window (the output
    /// lost time: an underrun, a stall, and the capture kept what it did not take), the excess
    /// over the margin is dropped (counted), so the round trip comes back to what it was.
    private var settle = (window: 0, read: 0, lowest: Int.max, margin: 0)

    // MARK: Mainloop thread / under the mainloop lock
    private var stream: OpaquePointer?
    private var negotiated: PulseBufferAttributes?
    /// Fragments and timing updates from the server (counted, no clock read), the count the
    /// 250 ms watchdog saw last and when it last saw it change (`pa_rtclock_now()`).
    private var heardCount = 0
    private var heardSeen = (count: 0, at: pa_usec_t(0))
    private var watchdog: OpaquePointer?

    // MARK: Shared (atomic / mutex)
    private let running = Atomic<Bool>(false)
    private let overruns = Atomic<Int>(0)
    private let underruns = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let drops = Atomic<Int>(0)
    private let backlogLimit = Atomic<Int>(0)
    /// A warm-up asked for by the control thread, taken by the next `read` (frames, 0: none).
    private let warmUpRequest = Atomic<Int>(0)
    private let warmUpWindow = Atomic<Int>(0)
    private let warmUpMargin = Atomic<Int>(0)
    private let warmUpTrimmed = Atomic<Int>(0)
    private let startThresholdRequest = Atomic<Int>(0)
    private let faultState = PulseStreamFault()

    /// Creates a stopped capture stream.
    ///
    /// - Throws: `.unsupportedFormat` for a rate or channel count PulseAudio cannot carry.
    package init(context: PulseContext, configuration: PulseStreamConfiguration) throws(PulseError) {
        try configuration.validate()
        self.context = context
        self.configuration = configuration
        let slice = configuration.maximumFramesPerSlice
        latencyFrames = max(1, Int(configuration.latencyMilliseconds * Double(configuration.sampleRate) / 1000))
        ring = RingBuffer(capacity: max(4 * latencyFrames, 8 * slice, configuration.sampleRate / 2) * configuration.channels)
        backlogLimit.store(latencyFrames + 2 * slice, ordering: .relaxed)
        scratch = .allocate(capacity: slice * configuration.channels)
        scratch.initialize(repeating: 0, count: slice * configuration.channels)
        drift = CaptureDriftCompensator(channels: configuration.channels, maximumFrames: slice,
                                        sampleRate: configuration.sampleRate)
    }

    deinit {
        stop()
        scratch.deallocate()
    }

    /// True between a successful `start()` and `stop()`.
    package var isRunning: Bool { running.load(ordering: .acquiring) }
    /// Times the ring was full when the server delivered data (that data was lost).
    package var overrunCount: Int { overruns.load(ordering: .relaxed) }
    /// Slices that found fewer frames than asked for (the rest was silence).
    package var underrunCount: Int { underruns.load(ordering: .relaxed) }
    /// Old frames dropped by `read` to keep the delay bounded.
    package var droppedFrames: Int { dropped.load(ordering: .relaxed) }
    /// Times `read` dropped old frames (each a hole in what the graph got).
    package var dropCount: Int { drops.load(ordering: .relaxed) }
    /// Full duplex: how far the reads' rate is steered from the source's to follow the output's
    /// clock, parts per million (negative: the source is slower than the sink; 0 without drift
    /// or outside full duplex). See ``CaptureDriftCompensator``.
    package var rateCorrectionPartsPerMillion: Int { drift.correctionPartsPerMillion }
    /// Holes in what the graph got since `start()`: overruns, underruns and drops together.
    package var lossCount: Int { overrunCount + underrunCount + dropCount }
    /// Why the stream stopped working while running, if it did.
    package var fault: PulseError? { faultState.fault }

    /// The most frames `read` lets wait in the ring before dropping the oldest (clamped to what
    /// the ring can hold). A full-duplex driver raises it to its pre-roll. Any thread; lock-free.
    package func setBacklogLimit(frames: Int) {
        let capacityFrames = ring.capacity / configuration.channels
        backlogLimit.store(max(configuration.maximumFramesPerSlice, min(frames, capacityFrames - configuration.maximumFramesPerSlice)),
                           ordering: .relaxed)
    }

    /// Makes the next reads a warm-up (full duplex, where the output takes a burst of frames at
    /// start and the source delivers in fragments): the first `frames` frames read are handed
    /// out as silence while the ring is consumed as usual (so the output's start-up burst and
    /// the phase of the first fragments cost no latency), the ring's lowest fill over the last
    /// `window` of them (the fill just before a fragment arrives, in steady state) is watched,
    /// and at the end the oldest frames beyond `margin` of that lowest fill are dropped once
    /// (``warmUpTrimmedFrames``), or, when it was below `margin`, the reads go on handing out
    /// silence without consuming until the ring has gained the difference. Afterwards the fill
    /// is watched over quarter-second windows: when the output lost time (an underrun, a stall)
    /// and the ring held more than the margin plus a tolerance all through a window, the excess over the
    /// margin is dropped (counted in ``droppedFrames`` and ``lossCount``), so the round trip
    /// returns to what it was. From then on every frame read is captured audio, contiguous,
    /// and the ring holds `margin` frames just before each fragment: the capture's share of a
    /// round trip is one fragment (the latency) plus `margin`. Reads that find the ring short
    /// during the warm-up are not underruns. Call before the render thread reads (or between
    /// reads: it takes effect at the next one). Any thread; lock-free.
    package func setWarmUp(frames: Int, window: Int, margin: Int) {
        warmUpWindow.store(max(0, min(window, frames)), ordering: .relaxed)
        warmUpMargin.store(max(0, margin), ordering: .relaxed)
        warmUpRequest.store(max(0, frames), ordering: .releasing)
    }

    /// Makes the reads hand out silence, consuming nothing and counting no underrun, until the
    /// ring holds `frames` frames (a capture that must lose nothing: the first frame handed out
    /// is the first frame captured, and the ring starts with a fragment and a margin, so it does
    /// not run dry before the next fragment). Takes effect at the next read. Any thread; lock-free.
    package func setStartThreshold(frames: Int) {
        startThresholdRequest.store(max(0, frames), ordering: .releasing)
    }

    /// Frames dropped at the end of the last warm-up to bring the ring down to its margin (never
    /// handed out: they were captured before the first frame the graph saw); negative, frames of
    /// silence handed out after the warm-up without consuming, to let the ring fill up to it.
    package var warmUpTrimmedFrames: Int { warmUpTrimmed.load(ordering: .relaxed) }

    /// Frames the ring can hold.
    package var capacityFrames: Int { ring.capacity / configuration.channels }

    /// Sets a handler called once on libpulse's mainloop thread when the running stream fails.
    package func setFaultHandler(_ handler: (@Sendable (PulseError) -> Void)?) {
        faultState.setHandler(handler)
    }

    /// Connects the record stream and waits until the server accepted it. Does nothing when running.
    ///
    /// - Throws: `.connectionLost`, `.deviceNotFound` (unknown source), `.streamFailed`, `.timedOut`.
    package func start(timeout: Double = 5) throws(PulseError) {
        guard !running.load(ordering: .acquiring) else { return }
        try PulseStreamSupport.requireConnected(context)
        faultState.clear()
        overruns.store(0, ordering: .relaxed)
        underruns.store(0, ordering: .relaxed)
        dropped.store(0, ordering: .relaxed)
        drops.store(0, ordering: .relaxed)
        ring.reset()
        running.store(true, ordering: .releasing)
        try PulseStreamSupport.connect(context: context, cleanUp: stop) { () throws(PulseError) in
            try connectLocked(timeout: timeout)
        }
    }

    /// Disconnects the stream. Idempotent.
    package func stop() {
        context.withLock {
            freeWatchdogLocked()
            if let stream { PulseStreamSupport.destroy(stream) }
            stream = nil
        }
        running.store(false, ordering: .releasing)
    }

    /// libpulse's capture latency plus what waits in our ring; nil when unknown.
    package func latency() -> PulseLatency? {
        context.withLock {
            guard let stream else { return nil }
            return PulseStreamSupport.latency(stream, ringFrames: readableFrames, sampleRate: configuration.sampleRate)
        }
    }

    /// The buffer metrics the server granted (nil before the first successful `start()`).
    package var bufferAttributes: PulseBufferAttributes? { context.withLock { negotiated } }

    // MARK: Render (consumer) side

    /// Frames waiting in the ring. Consumer thread, real-time safe.
    package var readableFrames: Int { ring.readableCount / configuration.channels }

    /// Fills exactly `frameCount` frames (at most `maximumFramesPerSlice`) of each channel buffer:
    /// captured frames first, silence for whatever is missing. Returns the frames that were real
    /// captured audio (in full duplex after the warm-up, where the frames come through the
    /// ``CaptureDriftCompensator``: all of them, also when the ring ran short and the tail is
    /// silence). Consumer thread (the render thread); real-time safe.
    @discardableResult
    package func read(frameCount: Int, into channels: UnsafePointer<UnsafeMutablePointer<Float>>) -> Int {
        let channelCount = configuration.channels
        let frames = min(frameCount, configuration.maximumFramesPerSlice)
        if warmUpRequest.load(ordering: .relaxed) > 0 {
            let requested = warmUpRequest.exchange(0, ordering: .acquiring)
            warmUp = (requested, warmUpWindow.load(ordering: .relaxed), .max, warmUpMargin.load(ordering: .relaxed), 0)
            settle.window = 0
        }
        if startThresholdRequest.load(ordering: .relaxed) > 0 {
            startAt = startThresholdRequest.exchange(0, ordering: .acquiring)
            settle.window = 0
            warmUp.remaining = 0
            warmUp.hold = 0
        }
        if startAt > 0 {
            if ring.readableCount / channelCount < startAt {
                for c in 0..<channelCount { channels[c].update(repeating: 0, count: frameCount) }
                return 0
            }
            startAt = 0
        }
        if warmUp.remaining > 0 { return warmUpRead(frameCount: frameCount, frames: frames, into: channels) }
        if warmUp.hold > 0 {
            // Held back after the warm-up: silence without consuming, so the ring fills up to the margin.
            for c in 0..<channelCount { channels[c].update(repeating: 0, count: frameCount) }
            warmUp.hold -= frameCount
            return 0
        }
        let waiting = ring.readableCount / channelCount
        let limit = backlogLimit.load(ordering: .relaxed)
        if waiting > limit {
            let excess = waiting - limit
            ring.discard(count: excess * channelCount)
            drift.forgetLowWaters()
            dropped.wrappingAdd(excess, ordering: .relaxed)
            drops.wrappingAdd(1, ordering: .relaxed)
        }
        if settle.window > 0 {
            // Full duplex after the warm-up: at the output's pace (see CaptureDriftCompensator).
            settleRead(waiting: min(waiting, limit), frames: frames)
            let complete = drift.read(from: ring, frames: frames, into: channels)
            for c in 0..<channelCount where frames < frameCount { (channels[c] + frames).update(repeating: 0, count: frameCount - frames) }
            if !complete { underruns.wrappingAdd(1, ordering: .relaxed) }
            return frames
        }
        let got = ring.read(into: scratch, count: frames * channelCount) / channelCount
        for c in 0..<channelCount {
            let dst = channels[c]
            var i = c
            for f in 0..<got {
                dst[f] = scratch[i]
                i += channelCount
            }
            if got < frameCount { (dst + got).update(repeating: 0, count: frameCount - got) }
        }
        if got < frameCount { underruns.wrappingAdd(1, ordering: .relaxed) }
        return got
    }

    /// Watches the fill before a read of `frames` frames and, at the end of a window, drops
    /// what waited above the margin plus a tolerance (a quarter of the margin, at least 2.5 ms)
    /// all through it. Render thread.
    private func settleRead(waiting: Int, frames: Int) {
        settle.lowest = min(settle.lowest, waiting)
        settle.read += frames
        guard settle.read >= settle.window else { return }
        let lowest = settle.lowest - frames
        settle.read = 0
        settle.lowest = .max
        guard lowest > settle.margin + max(settle.margin / 4, configuration.sampleRate / 400) else {
            // Within reach of the margin: a slow drift, steered away (a deadband of an eighth of
            // the margin, at least 1.25 ms: larger fragments jitter more).
            drift.steer(lowWater: lowest, deadband: max(configuration.sampleRate / 800, settle.margin / 8))
            return
        }
        let excess = min(lowest - settle.margin, ring.readableCount / configuration.channels - frames)
        guard excess > 0 else { return }
        ring.discard(count: excess * configuration.channels)
        drift.forgetLowWaters()
        dropped.wrappingAdd(excess, ordering: .relaxed)
        drops.wrappingAdd(1, ordering: .relaxed)
    }

    /// One read of the warm-up: consumes like `read`, hands out silence, watches the fill over
    /// the warm-up's last window and trims the ring to the margin when the warm-up ends.
    private func warmUpRead(frameCount: Int, frames: Int, into channels: UnsafePointer<UnsafeMutablePointer<Float>>) -> Int {
        let channelCount = configuration.channels
        let waiting = ring.readableCount / channelCount
        if warmUp.remaining <= warmUp.window { warmUp.lowest = min(warmUp.lowest, waiting) }
        _ = ring.read(into: scratch, count: frames * channelCount)
        for c in 0..<channelCount { channels[c].update(repeating: 0, count: frameCount) }
        warmUp.remaining -= frameCount
        if warmUp.remaining <= 0 {
            warmUp.remaining = 0
            // From now on, watch the fill (windows of a quarter second, at least four fragment periods).
            settle = (max(configuration.sampleRate / 4, 4 * warmUp.window), 0, .max, warmUp.margin)
            drift.reset()
            // The lowest fill seen was before a read; after it, `frames` less.
            let lowest = warmUp.lowest == .max ? 0 : warmUp.lowest - frames
            let excess = min(lowest - warmUp.margin, ring.readableCount / channelCount)
            if excess > 0 {
                ring.discard(count: excess * channelCount)
                warmUpTrimmed.store(excess, ordering: .relaxed)
            } else {
                // Too little waits before a fragment: hold the reads back until the margin has come.
                warmUp.hold = -excess
                warmUpTrimmed.store(excess, ordering: .relaxed)
            }
        }
        return 0
    }

    // MARK: Mainloop side (lock held)

    private func connectLocked(timeout: Double) throws(PulseError) {
        let s = try PulseStreamSupport.makeStream(context: context, configuration: configuration)
        stream = s
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(s, captureStateCallback, me)
        pa_stream_set_read_callback(s, captureReadCallback, me)
        pa_stream_set_latency_update_callback(s, captureHeardCallback, me)
        var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max,
                                  minreq: UInt32.max, fragsize: PulseStreamSupport.latencyBytes(configuration))
        guard pa_stream_connect_record(s, configuration.device, &attr, PulseStreamSupport.connectFlags(PA_STREAM_ADJUST_LATENCY)) == 0 else {
            throw streamError()
        }
        try PulseStreamSupport.waitUntilReady(s, context: context, configuration: configuration, timeout: timeout,
                                              operation: "connect capture stream")
        if let attributes = PulseStreamSupport.bufferAttributes(s, configuration: configuration) { negotiated = attributes }
        heardSeen = (heardCount, pa_rtclock_now())
        watchdog = pa_context_rttime_new(context.context, heardSeen.at + 250_000, captureWatchdogCallback, me)
    }

    private func freeWatchdogLocked() {
        if let watchdog, let free = pa_threaded_mainloop_get_api(context.mainloop).pointee.time_free { free(watchdog) }
        watchdog = nil
    }

    /// The server answered (a timing update). Mainloop thread.
    fileprivate func heard() { heardCount &+= 1 }

    /// Every 250 ms: a server silent for too long is a fault. Mainloop thread.
    fileprivate func watchdogFired() {
        guard stream != nil else { return }
        if heardCount != heardSeen.count {
            heardSeen = (heardCount, pa_rtclock_now())
        } else if PulseStreamSupport.serverSilent(since: heardSeen.at) {
            freeWatchdogLocked()
            let error = PulseError.serverNotResponding(seconds: PulseStreamSupport.silenceLimit)
            faultState.record(error)?(error)
            return
        }
        if let watchdog { pa_context_rttime_restart(context.context, watchdog, pa_rtclock_now() + 250_000) }
    }

    private func streamError() -> PulseError {
        PulseStreamSupport.streamError(context: context, configuration: configuration)
    }

    /// Moves every fragment libpulse holds into the ring. Mainloop thread.
    fileprivate func readAvailable() {
        guard let s = stream else { return }
        heardCount &+= 1
        while pa_stream_readable_size(s) > 0 {
            var data: UnsafeRawPointer?
            var bytes = 0
            guard pa_stream_peek(s, &data, &bytes) == 0, bytes > 0 else { break }
            let samples = bytes / MemoryLayout<Float>.size
            let written: Int
            if let data {
                written = ring.write(data.assumingMemoryBound(to: Float.self), count: samples)
            } else {
                written = ring.writeSilence(count: samples) // a hole in the record: keep the timing
            }
            if written < samples { overruns.wrappingAdd(1, ordering: .relaxed) }
            pa_stream_drop(s)
        }
    }

    fileprivate func stateChanged() {
        guard let s = stream else { return }
        if ag_pa_stream_is_good(pa_stream_get_state(s)) == 0 {
            let error = streamError()
            faultState.record(error)?(error)
        }
        context.signal()
    }
}

private func captureStateCallback(_ s: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulseCaptureStream.self)?.stateChanged()
}

private func captureHeardCallback(_ s: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulseCaptureStream.self)?.heard()
}

private func captureWatchdogCallback(_ api: UnsafeMutablePointer<pa_mainloop_api>?, _ event: OpaquePointer?,
                                     _ tv: UnsafePointer<timeval>?, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulseCaptureStream.self)?.watchdogFired()
}

private func captureReadCallback(_ s: OpaquePointer?, _ nbytes: Int, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulseCaptureStream.self)?.readAvailable()
}
