// What the loader needs to know about a sound file a player reads.

/// A sound file's rate, channel count and length, as reported by the `fileInfo` closure the
/// loader is given (AudioGraphOffline's GraphLoader provides one: AudioFileReader's).
///
/// Thread safety: a value type; safe to share between threads.
public struct AudioFileInfo: Sendable, Hashable {
    /// Frames per second.
    public var sampleRate: Double
    /// Channel count.
    public var channels: Int
    /// Length in frames.
    public var frames: Int64

    /// Creates file information.
    public init(sampleRate: Double, channels: Int, frames: Int64) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.frames = frames
    }

    /// Length in seconds.
    public var duration: Double { sampleRate > 0 ? Double(frames) / sampleRate : 0 }
}
