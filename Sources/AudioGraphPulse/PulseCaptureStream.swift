// Real-time capture from a PulseAudio source into a lock-free ring read slice by slice.
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
/// The ring holds four times the target latency (at least four slices). So that the delay does
/// not creep up when the two clocks drift, `read` drops the oldest frames when more than
/// latency + two slices are waiting (counted in `droppedFrames`).
///
/// Thread safety: `start()`, `stop()`, `latency()`, `setFaultHandler` are control-thread calls
/// (one thread at a time, not from libpulse callbacks). `read(frameCount:into:)` and
/// `readableFrames` belong to one consumer thread (the render thread) and are real-time safe.
/// Counters and `fault` may be read from any thread. `stop()` is idempotent and done by `deinit`.
public final class PulseCaptureStream: @unchecked Sendable {
    /// The requested settings.
    public let configuration: PulseStreamConfiguration
    /// The connection the stream lives on.
    public let context: PulseContext

    // MARK: Immutable after init
    private let ring: RingBuffer
    private let latencyFrames: Int

    // MARK: Render (consumer) thread only
    private let scratch: UnsafeMutablePointer<Float>

    // MARK: Mainloop thread / under the mainloop lock
    private var stream: OpaquePointer?
    private var negotiated: PulseBufferAttributes?

    // MARK: Shared (atomic / mutex)
    private let running = Atomic<Bool>(false)
    private let overruns = Atomic<Int>(0)
    private let underruns = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let faultState = Mutex<(fault: PulseError?, handler: (@Sendable (PulseError) -> Void)?)>((nil, nil))

    /// Creates a stopped capture stream.
    ///
    /// - Throws: `.unsupportedFormat` for a rate or channel count PulseAudio cannot carry.
    public init(context: PulseContext, configuration: PulseStreamConfiguration) throws(PulseError) {
        try configuration.validate()
        self.context = context
        self.configuration = configuration
        let slice = configuration.maximumFramesPerSlice
        latencyFrames = max(1, Int(configuration.latencyMilliseconds * Double(configuration.sampleRate) / 1000))
        ring = RingBuffer(capacity: max(4 * latencyFrames, 4 * slice) * configuration.channels)
        scratch = .allocate(capacity: slice * configuration.channels)
        scratch.initialize(repeating: 0, count: slice * configuration.channels)
    }

    deinit {
        stop()
        scratch.deallocate()
    }

    /// True between a successful `start()` and `stop()`.
    public var isRunning: Bool { running.load(ordering: .acquiring) }
    /// Times the ring was full when the server delivered data (that data was lost).
    public var overrunCount: Int { overruns.load(ordering: .relaxed) }
    /// Slices that found fewer frames than asked for (the rest was silence).
    public var underrunCount: Int { underruns.load(ordering: .relaxed) }
    /// Old frames dropped by `read` to keep the delay bounded.
    public var droppedFrames: Int { dropped.load(ordering: .relaxed) }
    /// Why the stream stopped working while running, if it did.
    public var fault: PulseError? { faultState.withLock { $0.fault } }

    /// Sets a handler called once on libpulse's mainloop thread when the running stream fails.
    public func setFaultHandler(_ handler: (@Sendable (PulseError) -> Void)?) {
        faultState.withLock { $0.handler = handler }
    }

    /// Connects the record stream and waits until the server accepted it. Does nothing when running.
    ///
    /// - Throws: `.connectionLost`, `.deviceNotFound` (unknown source), `.streamFailed`, `.timedOut`.
    public func start(timeout: Double = 5) throws(PulseError) {
        guard !running.load(ordering: .acquiring) else { return }
        guard context.isConnected else { throw context.failure ?? context.withLock { context.lostError() } }
        faultState.withLock { $0.fault = nil }
        overruns.store(0, ordering: .relaxed)
        underruns.store(0, ordering: .relaxed)
        dropped.store(0, ordering: .relaxed)
        ring.reset()
        running.store(true, ordering: .releasing)
        let error: PulseError? = context.withLock { () -> PulseError? in
            do throws(PulseError) { try connectLocked(timeout: timeout); return nil } catch { return error }
        }
        if let error {
            stop()
            throw error
        }
    }

    /// Disconnects the stream. Idempotent.
    public func stop() {
        context.withLock {
            if let stream {
                pa_stream_set_state_callback(stream, nil, nil)
                pa_stream_set_read_callback(stream, nil, nil)
                pa_stream_disconnect(stream)
                pa_stream_unref(stream)
            }
            stream = nil
        }
        running.store(false, ordering: .releasing)
    }

    /// libpulse's capture latency plus what waits in our ring; nil when unknown.
    public func latency() -> PulseLatency? {
        context.withLock {
            guard let stream else { return nil }
            var usec: pa_usec_t = 0
            var negative: Int32 = 0
            guard pa_stream_get_latency(stream, &usec, &negative) == 0 else { return nil }
            let server = negative != 0 ? -Double(usec) / 1e6 : Double(usec) / 1e6
            return PulseLatency(server: server, ring: Double(readableFrames) / Double(configuration.sampleRate))
        }
    }

    /// The buffer metrics the server granted (nil before the first successful `start()`).
    public var bufferAttributes: PulseBufferAttributes? { context.withLock { negotiated } }

    // MARK: Render (consumer) side

    /// Frames waiting in the ring. Consumer thread, real-time safe.
    public var readableFrames: Int { ring.readableCount / configuration.channels }

    /// Fills exactly `frameCount` frames (at most `maximumFramesPerSlice`) of each channel buffer:
    /// captured frames first, silence for whatever is missing. Returns the frames that were real
    /// captured audio. Consumer thread (the render thread); real-time safe.
    @discardableResult
    public func read(frameCount: Int, into channels: UnsafePointer<UnsafeMutablePointer<Float>>) -> Int {
        let channelCount = configuration.channels
        let frames = min(frameCount, configuration.maximumFramesPerSlice)
        let waiting = ring.readableCount / channelCount
        let limit = latencyFrames + 2 * configuration.maximumFramesPerSlice
        if waiting > limit {
            let excess = waiting - limit
            ring.discard(count: excess * channelCount)
            dropped.wrappingAdd(excess, ordering: .relaxed)
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

    // MARK: Mainloop side (lock held)

    private func connectLocked(timeout: Double) throws(PulseError) {
        let ctx = context.context
        var spec = pa_sample_spec(format: ag_pa_sample_float32ne(), rate: UInt32(configuration.sampleRate),
                                  channels: UInt8(configuration.channels))
        var map = pa_channel_map()
        pa_channel_map_init_extend(&map, UInt32(configuration.channels), PA_CHANNEL_MAP_DEFAULT)
        guard let s = pa_stream_new(ctx, configuration.streamName, &spec, &map) else {
            throw .streamFailed(stream: configuration.streamName, reason: PulseContext.errorText(pa_context_errno(ctx)))
        }
        stream = s
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(s, captureStateCallback, me)
        pa_stream_set_read_callback(s, captureReadCallback, me)
        let latencyUsec = pa_usec_t(configuration.latencyMilliseconds * 1000)
        var attr = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max,
                                  minreq: UInt32.max, fragsize: UInt32(pa_usec_to_bytes(latencyUsec, &spec)))
        let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue
                                      | PA_STREAM_INTERPOLATE_TIMING.rawValue
                                      | PA_STREAM_AUTO_TIMING_UPDATE.rawValue)
        guard pa_stream_connect_record(s, configuration.device, &attr, flags) == 0 else {
            throw streamError()
        }
        let settled = context.waitLocked(timeout: timeout) {
            ag_pa_stream_is_good(pa_stream_get_state(s)) == 0 || pa_stream_get_state(s) == PA_STREAM_READY
        }
        guard pa_stream_get_state(s) == PA_STREAM_READY else {
            throw settled ? streamError() : .timedOut(operation: "connect capture stream")
        }
        if let a = pa_stream_get_buffer_attr(s)?.pointee {
            let bpf = UInt32(configuration.bytesPerFrame)
            func frames(_ v: UInt32) -> Int { v == UInt32.max ? 0 : Int(v / bpf) }
            negotiated = PulseBufferAttributes(maximumLength: frames(a.maxlength), targetLength: frames(a.tlength),
                                               prebuffer: frames(a.prebuf), minimumRequest: frames(a.minreq),
                                               fragmentSize: frames(a.fragsize))
        }
    }

    private func streamError() -> PulseError {
        let ctx = context.context
        let code = pa_context_errno(ctx)
        if ag_pa_context_is_good(pa_context_get_state(ctx)) == 0 { return context.lostError() }
        if code == Int32(PA_ERR_NOENTITY.rawValue), let device = configuration.device {
            return .deviceNotFound(name: device)
        }
        return .streamFailed(stream: configuration.streamName, reason: PulseContext.errorText(code))
    }

    /// Moves every fragment libpulse holds into the ring. Mainloop thread.
    fileprivate func readAvailable() {
        guard let s = stream else { return }
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
            let handler = faultState.withLock { f -> (@Sendable (PulseError) -> Void)? in
                guard f.fault == nil else { return nil }
                f.fault = error
                return f.handler
            }
            handler?(error)
        }
        context.signal()
    }
}

private func captureStateCallback(_ s: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    Unmanaged<PulseCaptureStream>.fromOpaque(userdata).takeUnretainedValue().stateChanged()
}

private func captureReadCallback(_ s: OpaquePointer?, _ nbytes: Int, _ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    Unmanaged<PulseCaptureStream>.fromOpaque(userdata).takeUnretainedValue().readAvailable()
}
