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
    /// The largest slice the render callback is asked for. A playback stream renders smaller
    /// quanta (`playbackQuantumFrames`); a capture stream hands out slices up to this size.
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

    /// The playback request (`playbackRequestMilliseconds`) in whole frames, rounded up.
    var playbackRequestFrames: Int {
        Int((playbackRequestMilliseconds * Double(sampleRate) / 1000).rounded(.up))
    }

    /// The frames the playback render thread asks the render callback for at a time (the render
    /// quantum, cf. Web Audio's 128 frames), sized from the requested latency rather than from
    /// `maximumFramesPerSlice`: the largest power of two at most half a request
    /// (`playbackRequestMilliseconds`), lowered to the largest divisor of `maximumFramesPerSlice`
    /// (so every slice boundary of the graph is a quantum boundary: a change timed at a slice
    /// boundary lands on the same frame live and offline). 32 frames at 48 kHz for 10 or 20 ms.
    public var playbackQuantumFrames: Int {
        let half = max(1, playbackRequestFrames / 2)
        var quantum = 1
        while quantum * 2 <= half { quantum *= 2 }
        quantum = min(quantum, maximumFramesPerSlice)
        while maximumFramesPerSlice % quantum != 0 { quantum -= 1 }
        return quantum
    }

    /// The playback ring's capacity in frames: a request (`playbackRequestMilliseconds`) rounded
    /// up to whole quanta (`playbackQuantumFrames`), and no more: all it holds adds to the latency,
    /// and the server's queue (`tlength`), not the ring, is what bridges a late render or a late
    /// server. 128 frames (2.7 ms) at 48 kHz for 10 or 20 ms.
    public var playbackRingFrames: Int {
        let quantum = playbackQuantumFrames
        return max(1, (playbackRequestFrames + quantum - 1) / quantum) * quantum
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
