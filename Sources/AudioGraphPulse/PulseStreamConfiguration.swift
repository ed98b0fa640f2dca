// What a PulseAudio playback or capture stream is asked for: format, device, latency, slice size.

/// The settings of a `PulsePlaybackStream` or `PulseCaptureStream` (a value).
///
/// Samples always travel as native-endian float32, interleaved on the wire and non-interleaved
/// (one buffer per channel) on our side.
public struct PulseStreamConfiguration: Sendable, Equatable {
    /// Frames per second (1...384000).
    public var sampleRate: Int
    /// Channels (1...32), in PulseAudio's default channel map for that count (2 = front-left, front-right).
    public var channels: Int
    /// Sink (playback) or source (capture) name; nil for the server's default.
    public var device: String?
    /// Target latency in milliseconds: the server-side buffer. Playback: the stream's queue in the
    /// server (`tlength`, with early requests, so the sink's own period of `playbackRequestMilliseconds`
    /// and our ring come on top; see `PulsePlaybackStream`). Capture: `fragsize`, negotiated with
    /// `PA_STREAM_ADJUST_LATENCY`.
    public var latencyMilliseconds: Double
    /// The largest slice the render callback is asked for (and the slice the render thread uses).
    public var maximumFramesPerSlice: Int
    /// The stream's name as shown by `pactl list sink-inputs` / `source-outputs`.
    public var streamName: String

    /// Settings with the spec's defaults (48 kHz stereo, default device, 20 ms, 512-frame slices).
    public init(sampleRate: Int = 48000, channels: Int = 2, device: String? = nil,
                latencyMilliseconds: Double = 20, maximumFramesPerSlice: Int = 512,
                streamName: String = "AudioGraph") {
        self.sampleRate = sampleRate
        self.channels = channels
        self.device = device
        self.latencyMilliseconds = latencyMilliseconds
        self.maximumFramesPerSlice = maximumFramesPerSlice
        self.streamName = streamName
    }

    /// The playback stream's request size (`minreq`) and the sink period it asks for, in
    /// milliseconds: an eighth of the latency, at least 2.5 ms (smaller requests wake the server's
    /// main thread so often that it falls behind on a loaded machine) and at most half of it.
    public var playbackRequestMilliseconds: Double {
        min(latencyMilliseconds / 2, max(2.5, latencyMilliseconds / 8))
    }

    /// The playback ring's capacity in frames: whole slices, at least two, and enough to answer a
    /// request (`playbackRequestMilliseconds`) with a slice to spare.
    public var playbackRingFrames: Int {
        let request = Int((playbackRequestMilliseconds * Double(sampleRate) / 1000).rounded(.up))
        let slices = max(2, (request + maximumFramesPerSlice - 1) / maximumFramesPerSlice + 1)
        return slices * maximumFramesPerSlice
    }

    /// Bytes per interleaved float32 frame.
    var bytesPerFrame: Int { channels * MemoryLayout<Float>.size }

    /// Throws `.unsupportedFormat` for values PulseAudio cannot carry.
    func validate() throws(PulseError) {
        guard (1...384_000).contains(sampleRate), (1...32).contains(channels),
              maximumFramesPerSlice > 0, latencyMilliseconds > 0 else {
            throw .unsupportedFormat(sampleRate: Double(sampleRate), channels: channels)
        }
    }
}
