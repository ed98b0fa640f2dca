// Real-time playback to a PulseAudio sink from a render callback on a dedicated thread.
import AudioGraphRealtime
import CPulse
import CPulseShim
import Glibc
import Synchronization

/// Renders one slice: fill `frameCount` frames (the stream's `playbackQuantumFrames`, at most
/// `maximumFramesPerSlice`) into each of the
/// `channelCount` non-interleaved buffers. `sampleTime` is the slice's first frame on the
/// stream's timeline (0 at `start()`). Runs on the dedicated render thread; must be real-time
/// safe (no allocation, lock, I/O, waiting).
package typealias PulseRenderCallback = @Sendable (
    _ sampleTime: Int64, _ frameCount: Int, _ channels: UnsafePointer<UnsafeMutablePointer<Float>>
) -> Void

/// Plays float32 audio to a PulseAudio sink (the default one or a named one) at a target latency.
///
/// Data flow:
/// ```
///  render thread (ours, SCHED_FIFO if permitted)          libpulse mainloop thread (FIFO 19)
///  ┌────────────────────────────────┐   SPSC ring    ┌──────────────────────────────┐
///  │ render(sampleTime, q, buffers) │ ─────────────▶ │ write callback / 1 ms timer: │
///  │ interleave → ring.write        │  (2.7 ms at    │ ring.read → pa_stream_write  │
///  │ wait on semaphore between      │   10–20 ms)    │ post semaphore               │
///  │ quanta when the ring is full   │ ◀───────────── └──────────────────────────────┘
///  └────────────────────────────────┘   sem_post
/// ```
/// The render thread renders quanta of `configuration.playbackQuantumFrames` frames (sized from
/// the requested latency, 32 frames at 10 ms; a divisor of `maximumFramesPerSlice`, so slice
/// boundaries stay quantum boundaries) as long as one fits in the ring
/// (`configuration.playbackRingFrames`: a request, at most 4 ms, in whole quanta; 2.7 ms at 10
/// or 20 ms), then
/// sleeps on a POSIX semaphore until the mainloop thread has drained some: it wakes when the
/// server asks for data (the write callback drains the ring into the request and posts), not on
/// a timer. The mainloop thread, which carries every request and every quantum, runs at
/// `SCHED_FIFO` 19 too (`PulseContext`): with a ring this small, a mainloop thread held off by
/// other work would let the server's queue run dry.
/// The wait happens between render calls, never inside one; the render thread takes no lock (the
/// ring uses acquire/release atomics, `sem_post` is lock-free).
///
/// Buffering: the stream connects with `PA_STREAM_EARLY_REQUESTS`, `tlength` = the target latency
/// and `minreq` = `configuration.playbackRequestMilliseconds` (2.5 ms at 20 ms). The server then
/// runs the sink with a period of one request and asks for data every period, so its queue for
/// this stream stays between `tlength − minreq` and `tlength`. With `PA_STREAM_ADJUST_LATENCY`
/// the server would instead give half of `tlength` to the sink, and the queue would fall to half
/// of `tlength` before each request: every request and every write passes through the server's
/// main thread, which runs at normal priority, and a loaded machine delays it by 10 ms and more
/// at times (measured here: up to 10.7 ms per 20 s with the other core busy), so the fuller
/// queue is what keeps 20 ms free of underruns. `latency()` reports libpulse's latency (queue +
/// sink) plus the ring's fill (everything we hold: the render thread writes a quantum to the ring
/// as soon as it is rendered, and `pa_stream_write` hands the server what it takes at once, so
/// the server's figure counts it). Underflows reported by the server are counted in `underrunCount`.
///
/// The stream connects corked and is uncorked once the server's buffer is full, so the sink never
/// starts it empty (PulseAudio would then rewind and the first frames could be lost).
///
/// When the stream fails while running (the server dies, the sink is removed) the state callback
/// records `fault` and calls the fault handler on the mainloop thread, within milliseconds. A
/// stream that asked for a named sink and is moved elsewhere because that sink disappeared
/// (PulseAudio rescues streams to the default sink) faults with `.deviceLost` as well.
///
/// Thread safety: `start()`, `stop()`, `latency()`, `bufferAttributes` and `setFaultHandler` are
/// control-thread calls (any one thread at a time; not from libpulse callbacks or the render
/// callback); they take the mainloop lock and may wait for the server. `underrunCount`, `fault`,
/// `isRunning` and `renderedFrames` may be read from any thread. `stop()` is idempotent and done
/// by `deinit`; it never leaves a thread or a stream behind.
package final class PulsePlaybackStream: @unchecked Sendable {
    /// The requested settings.
    package let configuration: PulseStreamConfiguration
    /// The connection the stream lives on.
    package let context: PulseContext

    // MARK: Immutable after init
    private let render: PulseRenderCallback
    private let ring: RingBuffer
    private let wake = WakeSemaphore()

    // MARK: Render thread only (while running)
    private let channelBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let interleaved: UnsafeMutablePointer<Float>
    private var sampleTime: Int64 = 0

    // MARK: Mainloop thread / under the mainloop lock
    /// What one drain hands to pa_stream_write (which copies it into libpulse's memory pool).
    private let outgoing: UnsafeMutablePointer<Float>
    private var stream: OpaquePointer?
    private var timer: OpaquePointer?
    private var timerPeriod: pa_usec_t = 2000
    private var negotiated: PulseBufferAttributes?
    private var corked = true
    private var wasReady = false
    /// Requests and timing updates from the server (counted on the mainloop thread, no clock
    /// read), the count the 1 ms timer saw last, when it last saw it change
    /// (`pa_rtclock_now()`), and timer ticks until the next look (every 250 ms).
    private var heardCount = 0
    private var heardSeen = (count: 0, at: pa_usec_t(0), ticks: 0)

    // MARK: Control thread only
    private var thread: PosixThread?

    // MARK: Shared (atomic / mutex)
    private let running = Atomic<Bool>(false)
    private let underruns = Atomic<Int>(0)
    private let framesRendered = Atomic<Int>(0)
    /// The render thread starts no slice at or beyond this frame (Int64.max: no limit).
    private let renderLimit = Atomic<Int64>(.max)
    /// The render thread renders nothing at or beyond this frame; the rest of the slice that
    /// reaches it is silence (Int64.max: no end).
    private let endFrame = Atomic<Int64>(.max)
    private let faultState = PulseStreamFault()

    /// Creates a stopped stream. `render` is called on the render thread once started.
    ///
    /// - Throws: `.unsupportedFormat` for a rate or channel count PulseAudio cannot carry,
    ///   `.sliceSizeUnsuitableForLive` for a slice size that would force a tiny quantum.
    package init(context: PulseContext, configuration: PulseStreamConfiguration,
                render: @escaping PulseRenderCallback) throws(PulseError) {
        try configuration.validate()
        try configuration.validatePlaybackQuantum()
        self.context = context
        self.configuration = configuration
        self.render = render
        let slice = configuration.playbackQuantumFrames
        ring = RingBuffer(capacity: configuration.playbackRingFrames * configuration.channels)
        channelBuffers = .allocate(capacity: configuration.channels)
        for c in 0..<configuration.channels {
            channelBuffers[c] = .allocate(capacity: slice)
            channelBuffers[c].initialize(repeating: 0, count: slice)
        }
        interleaved = .allocate(capacity: slice * configuration.channels)
        outgoing = .allocate(capacity: ring.capacity)
    }

    deinit {
        stop()
        outgoing.deallocate()
        for c in 0..<configuration.channels { channelBuffers[c].deallocate() }
        channelBuffers.deallocate()
        interleaved.deallocate()
    }

    // MARK: Control

    /// True between a successful `start()` and `stop()` (also after a fault, until `stop()`).
    package var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Underflows the server reported since `start()` (it ran out of data and played silence).
    package var underrunCount: Int { underruns.load(ordering: .relaxed) }

    /// Frames the render callback has produced since `start()`.
    package var renderedFrames: Int { framesRendered.load(ordering: .relaxed) }

    /// Why the stream stopped working while running, if it did (nil otherwise).
    package var fault: PulseError? { faultState.fault }

    /// Sets a handler called once on libpulse's mainloop thread when the running stream fails.
    /// It must return quickly and must not call `stop()` (signal another thread instead).
    package func setFaultHandler(_ handler: (@Sendable (PulseError) -> Void)?) {
        faultState.setHandler(handler)
    }

    /// Holds the render thread before it starts a quantum at or beyond `frame` (nil: no hold), so
    /// that a control thread can apply a change exactly at the first slice boundary at or after
    /// `frame` (see `LivePlayer`; quanta divide slices, so the thread is held at or before that
    /// boundary). The render thread waits between quanta, never inside one; while
    /// held, the ring and the server's buffer keep playing (hold only briefly, well under the
    /// latency, or the server underruns). Any thread; lock-free.
    package func setRenderLimit(_ frame: Int64?) {
        renderLimit.store(frame ?? .max, ordering: .releasing)
        wake.post()
    }

    /// Ends the stream's audio at `frame` (nil: never): the render thread renders no quantum at or
    /// beyond it and silences the part of the quantum that crosses it, so exactly `frame` frames
    /// are played; ``renderedFrames`` then stays at `frame`. Call before `start()` for short
    /// lengths. Any thread; lock-free.
    package func setEndFrame(_ frame: Int64?) {
        endFrame.store(frame ?? .max, ordering: .releasing)
        wake.post()
    }

    /// Whether every frame up to the end frame (``setEndFrame(_:)``) has been rendered.
    package var hasRenderedToEnd: Bool { Int64(renderedFrames) >= endFrame.load(ordering: .acquiring) }

    /// Lets what has been rendered play out: waits until the ring has gone to the server and the
    /// server has played it (`pa_stream_drain`), at most `timeout` seconds. Call after
    /// ``hasRenderedToEnd`` and before `stop()`. Control thread; blocks.
    /// - Returns: whether everything played within `timeout`.
    @discardableResult
    package func drain(timeout: Double = 5) -> Bool {
        let deadline = MonotonicClock.seconds() + max(0, min(timeout, 3600))
        // A short stream may never have filled the server's buffer: uncork, so it plays.
        context.withLock { uncorkLocked() }
        while ring.readableCount > 0 && MonotonicClock.seconds() < deadline && fault == nil && running.load(ordering: .acquiring) {
            context.withLock { drainLocked() }
            usleep(2000)
        }
        let seconds = deadline - MonotonicClock.seconds()
        guard seconds > 0, fault == nil else { return false }
        return context.withLock {
            guard let s = stream else { return false }
            let me = Unmanaged.passUnretained(self).toOpaque()
            return context.waitForOperationLocked(pa_stream_drain(s, playbackDrainCallback, me), timeout: seconds)
        }
    }

    private func uncorkLocked() {
        guard let s = stream, corked else { return }
        corked = false
        if let operation = pa_stream_cork(s, 0, nil, nil) { pa_operation_unref(operation) }
    }

    fileprivate func drainFinished() { context.signal() }

    /// True when the render thread obtained real-time scheduling.
    package var hasRealtimePriority: Bool { thread?.isRealtime ?? false }

    /// Starts the render thread, prefills the ring, connects the stream and waits until the server
    /// accepted it. Does nothing when already running.
    ///
    /// - Throws: `.connectionLost` when the context is down, `.deviceNotFound` for an unknown sink,
    ///   `.streamFailed` or `.timedOut` otherwise. Nothing is left running after a throw.
    package func start(timeout: Double = 5) throws(PulseError) {
        guard !running.load(ordering: .acquiring) else { return }
        try PulseStreamSupport.requireConnected(context)
        faultState.clear()
        underruns.store(0, ordering: .relaxed)
        framesRendered.store(0, ordering: .relaxed)
        ring.reset()
        wake.drain()
        sampleTime = 0
        running.store(true, ordering: .releasing)
        // (renderLimit is left as the caller set it, so a hold can be in place before start.)
        do throws(PosixThread.StartError) {
            thread = try PosixThread(name: "ag-render", scheduling: .realtime(priority: PosixThread.renderPriority)) {
                [unowned self] in self.renderLoop()
            }
        } catch {
            running.store(false, ordering: .releasing)
            throw .streamFailed(stream: "playback", reason: error.description)
        }

        // Give the render thread a moment to fill the ring so the first request is met.
        let sliceSamples = configuration.playbackQuantumFrames * configuration.channels
        // (Not when held at frame 0: a control thread applies a change before the first slice.)
        // (Nor once the end frame is rendered: a stream shorter than the ring never fills it.)
        for _ in 0..<500 where ring.writableCount >= sliceSamples && renderLimit.load(ordering: .acquiring) > 0
            && Int64(framesRendered.load(ordering: .relaxed)) < endFrame.load(ordering: .acquiring) {
            usleep(1000)
        }

        try PulseStreamSupport.connect(context: context, cleanUp: stop) { () throws(PulseError) in
            try connectLocked(timeout: timeout)
        }
    }

    /// Disconnects the stream and joins the render thread. Idempotent; safe after a fault.
    package func stop() {
        context.withLock {
            if let timer, let free = pa_threaded_mainloop_get_api(context.mainloop).pointee.time_free { free(timer) }
            timer = nil
            if let stream { PulseStreamSupport.destroy(stream) }
            stream = nil
        }
        running.store(false, ordering: .releasing)
        wake.post()
        thread?.join()
        thread = nil
    }

    /// The stream's latency now: libpulse's figure plus our ring. nil when not running or when
    /// no timing information has arrived yet.
    package func latency() -> PulseLatency? {
        context.withLock {
            guard let stream else { return nil }
            return PulseStreamSupport.latency(stream, ringFrames: ring.readableCount / configuration.channels,
                                              sampleRate: configuration.sampleRate)
        }
    }

    /// The buffer metrics the server granted (nil before the first successful `start()`).
    package var bufferAttributes: PulseBufferAttributes? { context.withLock { negotiated } }

    // MARK: Render thread

    /// Renders whole quanta while they fit in the ring; sleeps between quanta otherwise.
    private func renderLoop() {
        let frames = configuration.playbackQuantumFrames
        let channels = configuration.channels
        let sliceSamples = frames * channels
        // The real-time check: a ControlLock taken anywhere below counts (and traps in debug).
        RenderThreadMark.markCurrentThread(true)
        defer { RenderThreadMark.markCurrentThread(false) }
        while running.load(ordering: .acquiring) {
            let end = endFrame.load(ordering: .acquiring)
            while ring.writableCount >= sliceSamples && sampleTime < renderLimit.load(ordering: .acquiring) && sampleTime < end {
                render(sampleTime, frames, channelBuffers)
                // The slice that crosses the end frame is silent from there on.
                let valid = Int(min(Int64(frames), end - sampleTime))
                if valid < frames {
                    for c in 0..<channels { (channelBuffers[c] + valid).update(repeating: 0, count: frames - valid) }
                }
                for c in 0..<channels {
                    let src = channelBuffers[c]
                    var i = c
                    for f in 0..<frames {
                        interleaved[i] = src[f]
                        i += channels
                    }
                }
                ring.write(interleaved, count: sliceSamples)
                sampleTime += Int64(frames)
                framesRendered.wrappingAdd(valid, ordering: .relaxed)
                if !running.load(ordering: .relaxed) { return }
            }
            // Between slices: wait for the mainloop thread to free space (or stop()).
            wake.wait(timeout: 0.1)
        }
    }

    // MARK: Mainloop side (lock held)

    private func connectLocked(timeout: Double) throws(PulseError) {
        let s = try PulseStreamSupport.makeStream(context: context, configuration: configuration)
        stream = s
        wasReady = false
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(s, playbackStateCallback, me)
        pa_stream_set_write_callback(s, playbackWriteCallback, me)
        pa_stream_set_underflow_callback(s, playbackUnderflowCallback, me)
        pa_stream_set_moved_callback(s, playbackMovedCallback, me)
        pa_stream_set_latency_update_callback(s, playbackHeardCallback, me)
        heardSeen = (heardCount, pa_rtclock_now(), 0)

        let request = pa_usec_t(configuration.playbackRequestMilliseconds * 1000)
        var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: PulseStreamSupport.latencyBytes(configuration),
                                  prebuf: UInt32.max,
                                  minreq: PulseStreamSupport.bytes(microseconds: request, configuration),
                                  fragsize: UInt32.max)
        let flags = PulseStreamSupport.connectFlags(PA_STREAM_EARLY_REQUESTS, PA_STREAM_START_CORKED)
        guard pa_stream_connect_playback(s, configuration.device, &attr, flags,
                                         nil, nil) == 0 else {
            throw streamError()
        }
        try PulseStreamSupport.waitUntilReady(s, context: context, configuration: configuration, timeout: timeout,
                                              operation: "connect playback stream")
        if let attributes = PulseStreamSupport.bufferAttributes(s, configuration: configuration) { negotiated = attributes }
        // A short timer tops up libpulse's buffer from the ring between server requests, so a
        // request that found the ring short is completed as soon as the render thread catches up.
        let sliceUsec = pa_usec_t(Double(configuration.playbackQuantumFrames) * 1e6 / Double(configuration.sampleRate))
        timerPeriod = max(1000, min(5000, min(sliceUsec / 2, request)))
        timer = pa_context_rttime_new(context.context, pa_rtclock_now() + timerPeriod, playbackTimerCallback, me)
        corked = true
        drainLocked()
    }

    /// The error for a stream that failed: unknown device, lost connection, or the stream's own.
    private func streamError() -> PulseError {
        PulseStreamSupport.streamError(context: context, configuration: configuration)
    }

    /// Moves what the ring holds into libpulse, up to what the server asked for. Mainloop thread.
    fileprivate func drainLocked() {
        guard let s = stream else { return }
        let bpf = configuration.bytesPerFrame
        var moved = false
        while true {
            let writable = pa_stream_writable_size(s)
            guard writable != Int.max, writable != -1 && writable > 0 else { break }
            let readableFrames = ring.readableCount / configuration.channels
            let bytes = min(writable, readableFrames * bpf) / bpf * bpf
            guard bytes > 0 else { break }
            let samples = ring.read(into: outgoing, count: bytes / 4)
            guard pa_stream_write(s, outgoing, samples * 4, nil, 0, PA_SEEK_RELATIVE) == 0 else { break }
            moved = true
        }
        if moved { wake.post() }
        // The stream was created corked: uncork once the server's buffer is full, so the sink
        // never renders the stream empty.
        if corked, pa_stream_writable_size(s) == 0 { uncorkLocked() }
    }

    /// The server answered (a timing update). Mainloop thread.
    fileprivate func heard() { heardCount &+= 1 }

    /// Data was asked for. Mainloop thread.
    fileprivate func requested() {
        heardCount &+= 1
        drainLocked()
    }

    fileprivate func timerFired() {
        heardSeen.ticks += 1
        if heardSeen.ticks * Int(timerPeriod) >= 250_000 {
            // Every 250 ms: has the server said anything in the last 2 s?
            heardSeen.ticks = 0
            if heardCount != heardSeen.count {
                heardSeen.count = heardCount
                heardSeen.at = pa_rtclock_now()
            } else if PulseStreamSupport.serverSilent(since: heardSeen.at) {
                report(.serverNotResponding(seconds: PulseStreamSupport.silenceLimit))
                return
            }
        }
        drainLocked()
        if let timer {
            pa_context_rttime_restart(context.context, timer, pa_rtclock_now() + timerPeriod)
        }
    }

    fileprivate func underflowed() {
        underruns.wrappingAdd(1, ordering: .relaxed)
    }

    fileprivate func moved() {
        guard let s = stream, let wanted = configuration.device,
              let name = pa_stream_get_device_name(s), String(cString: name) != wanted else { return }
        report(.deviceLost(name: wanted))
    }

    fileprivate func stateChanged() {
        guard let s = stream else { return }
        let st = pa_stream_get_state(s)
        if st == PA_STREAM_READY { wasReady = true }
        if ag_pa_stream_is_good(st) == 0, wasReady {
            // Failing after it ran: the server died, or the stream was killed (its sink removed).
            if ag_pa_context_is_good(pa_context_get_state(context.context)) == 0 {
                report(context.lostError())
            } else if let device = configuration.device {
                report(.deviceLost(name: device))
            } else {
                report(streamError())
            }
        }
        context.signal()
    }

    /// Records the first fault and calls the handler. Mainloop thread.
    private func report(_ error: PulseError) {
        let handler = faultState.record(error)
        if let timer, let free = pa_threaded_mainloop_get_api(context.mainloop).pointee.time_free { free(timer) }
        timer = nil
        handler?(error)
    }
}

private func playbackDrainCallback(_ s: OpaquePointer?, _ success: Int32, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulsePlaybackStream.self)?.drainFinished()
}

private func playbackMovedCallback(_ s: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulsePlaybackStream.self)?.moved()
}

private func playbackStateCallback(_ s: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulsePlaybackStream.self)?.stateChanged()
}

private func playbackWriteCallback(_ s: OpaquePointer?, _ nbytes: Int, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulsePlaybackStream.self)?.requested()
}

private func playbackHeardCallback(_ s: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulsePlaybackStream.self)?.heard()
}

private func playbackUnderflowCallback(_ s: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulsePlaybackStream.self)?.underflowed()
}

private func playbackTimerCallback(_ api: UnsafeMutablePointer<pa_mainloop_api>?, _ event: OpaquePointer?,
                                   _ tv: UnsafePointer<timeval>?, _ userdata: UnsafeMutableRawPointer?) {
    PulseStreamSupport.owner(userdata, as: PulsePlaybackStream.self)?.timerFired()
}
