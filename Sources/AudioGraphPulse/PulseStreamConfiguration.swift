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
    /// Target latency in milliseconds: the server-side buffer (`tlength` for playback,
    /// `fragsize` for capture), negotiated with `PA_STREAM_ADJUST_LATENCY`.
    public var latencyMilliseconds: Double
    /// The largest slice the render callback is asked for (and the slice the render thread uses).
    public var maximumFramesPerSlice: Int
    /// The stream's name as shown by `pactl list sink-inputs` / `source-outputs`.
    public var streamName: String

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
