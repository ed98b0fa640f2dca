// The server-side buffer metrics a PulseAudio stream ended up with, in frames.

/// A stream's negotiated `pa_buffer_attr`, converted from bytes to frames.
package struct PulseBufferAttributes: Sendable, Equatable {
    /// `maxlength`: the most the server buffers.
    package var maximumLength: Int
    /// `tlength` (playback): the target fill of the server buffer, i.e. the latency target.
    package var targetLength: Int
    /// `prebuf` (playback): frames needed before playback starts.
    package var prebuffer: Int
    /// `minreq` (playback): the smallest request the server sends.
    package var minimumRequest: Int
    /// `fragsize` (capture): the size of the chunks the server sends.
    package var fragmentSize: Int
}

/// A stream's current latency, seconds.
public struct PulseLatency: Sendable, Equatable {
    /// What libpulse reports (`pa_stream_get_latency`): for playback the time until a sample
    /// written now is heard; for capture the time a sample spent before we read it.
    public var server: Double
    /// The time held in our own ring buffer between the render thread and libpulse.
    public var ring: Double
    /// A latency of `server` seconds in the server and `ring` seconds in our ring.
    public init(server: Double, ring: Double) {
        self.server = server
        self.ring = ring
    }

    /// `server + ring`: the end-to-end latency of our render callback.
    public var total: Double { server + ring }
}
