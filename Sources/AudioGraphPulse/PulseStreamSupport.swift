// The parts PulsePlaybackStream and PulseCaptureStream share: stream creation, readiness, errors, latency, teardown.
import CPulse
import CPulseShim
import Synchronization

/// What a playback and a capture stream do alike with a `pa_stream`: create it for a
/// configuration, connect it under the mainloop lock and wait until the server accepted it, read
/// back the buffer metrics and the latency, turn a failure into a `PulseError`, tear it down.
///
/// Thread safety: stateless. Every function that takes a `pa_stream` must be called with the
/// context's mainloop lock held (on a control thread inside `context.withLock`, or on the
/// mainloop thread in a callback), like the libpulse calls it makes; none is for the render thread.
enum PulseStreamSupport {
    /// The float32 sample spec of `configuration`.
    static func sampleSpec(_ configuration: PulseStreamConfiguration) -> pa_sample_spec {
        pa_sample_spec(format: ag_pa_sample_float32ne(), rate: UInt32(configuration.sampleRate),
                       channels: UInt8(configuration.channels))
    }

    /// A new, unconnected stream with the spec and default channel map of `configuration`.
    static func makeStream(context: PulseContext, configuration: PulseStreamConfiguration) throws(PulseError) -> OpaquePointer {
        var spec = sampleSpec(configuration)
        var map = pa_channel_map()
        pa_channel_map_init_extend(&map, UInt32(configuration.channels), PA_CHANNEL_MAP_DEFAULT)
        guard let stream = pa_stream_new(context.context, configuration.streamName, &spec, &map) else {
            throw .streamFailed(stream: configuration.streamName,
                                reason: PulseContext.errorText(pa_context_errno(context.context)))
        }
        return stream
    }

    /// `configuration.latencyMilliseconds` in bytes of the stream's format (for tlength/fragsize).
    static func latencyBytes(_ configuration: PulseStreamConfiguration) -> UInt32 {
        bytes(microseconds: latencyMicroseconds(configuration), configuration)
    }

    /// `microseconds` of audio in bytes of the stream's format (whole frames).
    static func bytes(microseconds: pa_usec_t, _ configuration: PulseStreamConfiguration) -> UInt32 {
        var spec = sampleSpec(configuration)
        return UInt32(pa_usec_to_bytes(microseconds, &spec))
    }

    /// `configuration.latencyMilliseconds` in microseconds.
    static func latencyMicroseconds(_ configuration: PulseStreamConfiguration) -> pa_usec_t {
        pa_usec_t(configuration.latencyMilliseconds * 1000)
    }

    /// `mode` (how the server sizes its buffers: `PA_STREAM_ADJUST_LATENCY` or
    /// `PA_STREAM_EARLY_REQUESTS`) plus the flags both directions share (interpolated timing,
    /// updated automatically) and `extra`.
    static func connectFlags(_ mode: pa_stream_flags_t, _ extra: pa_stream_flags_t...) -> pa_stream_flags_t {
        pa_stream_flags_t(rawValue: extra.reduce(mode.rawValue
                                                 | PA_STREAM_INTERPOLATE_TIMING.rawValue
                                                 | PA_STREAM_AUTO_TIMING_UPDATE.rawValue) { $0 | $1.rawValue })
    }

    /// Waits (mainloop lock held) until the connecting stream is ready or has failed.
    ///
    /// - Throws: the stream's error (see `streamError`) when it failed, `.timedOut(operation:)`
    ///   when it settled neither way within `timeout` seconds.
    static func waitUntilReady(_ stream: OpaquePointer, context: PulseContext, configuration: PulseStreamConfiguration,
                               timeout: Double, operation: String) throws(PulseError) {
        let settled = context.waitLocked(timeout: timeout) {
            ag_pa_stream_is_good(pa_stream_get_state(stream)) == 0 || pa_stream_get_state(stream) == PA_STREAM_READY
        }
        guard pa_stream_get_state(stream) == PA_STREAM_READY else {
            throw settled ? streamError(context: context, configuration: configuration) : .timedOut(operation: operation)
        }
    }

    /// The buffer metrics the server granted, in frames (a field the server left unset, -1, reads 0).
    static func bufferAttributes(_ stream: OpaquePointer, configuration: PulseStreamConfiguration) -> PulseBufferAttributes? {
        guard let a = pa_stream_get_buffer_attr(stream)?.pointee else { return nil }
        let bpf = UInt32(configuration.bytesPerFrame)
        func frames(_ v: UInt32) -> Int { v == UInt32.max ? 0 : Int(v / bpf) }
        return PulseBufferAttributes(maximumLength: frames(a.maxlength), targetLength: frames(a.tlength),
                                     prebuffer: frames(a.prebuf), minimumRequest: frames(a.minreq),
                                     fragmentSize: frames(a.fragsize))
    }

    /// libpulse's latency of `stream` plus `ringFrames` waiting in our ring; nil while no timing
    /// information has arrived.
    static func latency(_ stream: OpaquePointer, ringFrames: Int, sampleRate: Int) -> PulseLatency? {
        var usec: pa_usec_t = 0
        var negative: Int32 = 0
        guard pa_stream_get_latency(stream, &usec, &negative) == 0 else { return nil }
        let server = negative != 0 ? -Double(usec) / 1e6 : Double(usec) / 1e6
        return PulseLatency(server: server, ring: Double(ringFrames) / Double(sampleRate))
    }

    /// The error for a stream that failed: lost connection, unknown device, or the stream's own.
    static func streamError(context: PulseContext, configuration: PulseStreamConfiguration) -> PulseError {
        let ctx = context.context
        let code = pa_context_errno(ctx)
        if ag_pa_context_is_good(pa_context_get_state(ctx)) == 0 { return context.lostError() }
        if code == Int32(PA_ERR_NOENTITY.rawValue), let device = configuration.device {
            return .deviceNotFound(name: device)
        }
        return .streamFailed(stream: configuration.streamName, reason: PulseContext.errorText(code))
    }

    /// Throws the context's failure (or its lost-connection error) unless it is connected.
    static func requireConnected(_ context: PulseContext) throws(PulseError) {
        guard context.isConnected else { throw context.failure ?? context.withLock { context.lostError() } }
    }

    /// Runs `connect` under the mainloop lock; when it throws, calls `cleanUp` with the lock
    /// released (the stream's `stop()`) and rethrows.
    static func connect(context: PulseContext, cleanUp: () -> Void, _ connect: () throws(PulseError) -> Void) throws(PulseError) {
        let error = context.withLock { () -> PulseError? in
            do throws(PulseError) { try connect(); return nil } catch { return error }
        }
        if let error {
            cleanUp()
            throw error
        }
    }

    /// The stream object a libpulse callback's `userdata` names (passed unretained at connect;
    /// the stream clears its callbacks before it goes away). Nil userdata: nil.
    @inline(__always)
    static func owner<Stream: AnyObject>(_ userdata: UnsafeMutableRawPointer?, as type: Stream.Type) -> Stream? {
        userdata.map { Unmanaged<Stream>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Seconds without a data request, a fragment or a timing update after which a running
    /// stream reports `.serverNotResponding` (libpulse's automatic timing updates come at least
    /// every 1.5 s while the server answers).
    static let silenceLimit = 2.0

    /// Whether `lastHeard` (a `pa_rtclock_now()` reading) is more than ``silenceLimit`` ago.
    static func serverSilent(since lastHeard: pa_usec_t) -> Bool {
        let now = pa_rtclock_now()
        return now > lastHeard && now - lastHeard > pa_usec_t(silenceLimit * 1_000_000)
    }

    /// Removes every callback a stream may have, disconnects and releases it.
    static func destroy(_ stream: OpaquePointer) {
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_read_callback(stream, nil, nil)
        pa_stream_set_write_callback(stream, nil, nil)
        pa_stream_set_underflow_callback(stream, nil, nil)
        pa_stream_set_moved_callback(stream, nil, nil)
        pa_stream_set_latency_update_callback(stream, nil, nil)
        pa_stream_disconnect(stream)
        pa_stream_unref(stream)
    }
}
