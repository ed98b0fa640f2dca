// What a PulseAudio playback or capture stream is asked for: format, device, latency, slice size.

/// The settings of a `PulsePlaybackStream` or `PulseCaptureStream` (a value).
///
/// Samples always travel as native-endian float32, interleaved on the wire and non-interleaved
/// (one buffer per channel) on our side.
package struct PulseStreamConfiguration: Sendable, Equatable {
    /// Frames per second (1...384000).
    package var sampleRate: Int
    /// Channels (1...32), in PulseAudio's default channel map for that count (2 = front-left, front-right).
    package var channels: Int
    /// Sink (playback) or source (capture) name; nil for the server's default.
    package var device: String?
    /// Target latency in milliseconds: the server-side buffer. Playback: the stream's queue in the
    /// server (`tlength`, with early requests, so the sink's own period of `playbackRequestMilliseconds`
    /// and our ring come on top; see `PulsePlaybackStream`). Capture: `fragsize`, negotiated with
    /// `PA_STREAM_ADJUST_LATENCY`.
    package var latencyMilliseconds: Double
    /// The largest slice the render callback is asked for. A playback stream renders smaller
    /// quanta (`playbackQuantumFrames`); a capture stream hands out slices up to this size.
    package var maximumFramesPerSlice: Int
    /// The stream's name as shown by `pactl list sink-inputs` / `source-outputs`.
    package var streamName: String

    /// Settings with the spec's defaults (48 kHz stereo, default device, 20 ms, 512-frame slices).
    package init(sampleRate: Int = 48000, channels: Int = 2, device: String? = nil,
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
    package var playbackRequestMilliseconds: Double {
        min(latencyMilliseconds / 2, max(2.5, latencyMilliseconds / 8))
    }

    /// What the playback ring is sized to hold, milliseconds: a request
    /// (`playbackRequestMilliseconds`), so that one is answered at once, but at most 4 ms: all the
    /// ring holds adds to the latency the server reports, and the server's queue (`tlength`), not
    /// the ring, is what bridges a late render or a late server. A larger request is answered in
    /// parts (the 1 ms top-up timer), which costs no latency.
    package var playbackRingMilliseconds: Double { min(playbackRequestMilliseconds, 4) }

    /// `playbackRingMilliseconds` in whole frames, rounded up.
    private var playbackRingTargetFrames: Int {
        max(1, Int((playbackRingMilliseconds * Double(sampleRate) / 1000).rounded(.up)))
    }

    /// The frames the playback render thread asks the render callback for at a time (the render
    /// quantum, cf. Web Audio's 128 frames), sized from the requested latency rather than from
    /// `maximumFramesPerSlice`: the largest power of two at most half of
    /// `playbackRingMilliseconds`, lowered to the largest divisor of `maximumFramesPerSlice` (so
    /// every slice boundary of the graph is a quantum boundary: a change timed at a slice
    /// boundary lands on the same frame live and offline). At 48 kHz: 32 frames for 10 to 20 ms,
    /// 64 from 30 ms on.
    package var playbackQuantumFrames: Int {
        var quantum = unloweredPlaybackQuantumFrames
        while maximumFramesPerSlice % quantum != 0 { quantum -= 1 }
        return quantum
    }

    /// The quantum before it is lowered to a divisor of `maximumFramesPerSlice`.
    private var unloweredPlaybackQuantumFrames: Int {
        let half = max(1, playbackRingTargetFrames / 2)
        var quantum = 1
        while quantum * 2 <= half { quantum *= 2 }
        return min(quantum, maximumFramesPerSlice)
    }

    /// The smallest live quantum that lowering to a divisor of `maximumFramesPerSlice` may reach
    /// (a quantum costs a callback and a ring hand-off; 1 frame, as a prime slice size would
    /// give, is unplayable). A quantum that is small because the latency or the slice is small
    /// is accepted.
    package static let minimumQuantumFrames = 16

    /// Throws `.sliceSizeUnsuitableForLive` when `maximumFramesPerSlice` lowers the playback
    /// quantum below ``minimumQuantumFrames`` (the quantum must divide the slice so that live
    /// output stays bit-identical to offline rendering: every slice boundary is a quantum boundary).
    func validatePlaybackQuantum() throws(PulseError) {
        let quantum = playbackQuantumFrames
        if quantum < min(Self.minimumQuantumFrames, unloweredPlaybackQuantumFrames) {
            throw .sliceSizeUnsuitableForLive(maximumFramesPerSlice: maximumFramesPerSlice, quantum: quantum)
        }
    }

    /// The playback ring's capacity in frames: `playbackRingMilliseconds` rounded up to whole
    /// quanta (`playbackQuantumFrames`), or down when up would exceed 5 ms (an odd slice size
    /// can force a quantum that does not divide the target). At 48 kHz: 128 frames (2.7 ms) for
    /// 10 to 20 ms, 192 (4 ms) from 30 ms on.
    package var playbackRingFrames: Int {
        let quantum = playbackQuantumFrames, target = playbackRingTargetFrames
        let up = (target + quantum - 1) / quantum * quantum
        return up * 200 <= sampleRate ? up : max(quantum, target / quantum * quantum)
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
