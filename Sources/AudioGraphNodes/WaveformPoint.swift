// One point of a file's waveform overview: min, max and RMS of a run of frames.

/// The smallest and largest sample and the root mean square of one channel over one run of
/// frames (a point of ``AudioFileReader/waveform(path:pointCount:)``).
///
/// Thread safety: a value type; safe to share between threads.
package struct WaveformPoint: Sendable, Hashable {
    /// The smallest sample (0 for a run of no frames).
    package var minimum: Float
    /// The largest sample (0 for a run of no frames).
    package var maximum: Float
    /// The root mean square (0 for a run of no frames).
    package var rms: Float

    /// Creates a point.
    package init(minimum: Float, maximum: Float, rms: Float) {
        self.minimum = minimum
        self.maximum = maximum
        self.rms = rms
    }
}
