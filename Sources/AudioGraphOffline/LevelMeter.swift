// RMS and peak levels of a block of samples, in dBFS, with a text bar (for `audiograph meter`).
import AudioGraphCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The level of one block of audio: RMS and peak over all channels, in dBFS (0 dBFS = full scale
/// 1.0; a sine of amplitude 1 has an RMS of -3.01 dBFS).
///
/// Thread safety: a value type.
package struct LevelMeter: Sendable, Equatable {
    /// RMS in dBFS (-infinity for digital silence).
    package var rmsDecibels: Double
    /// Peak in dBFS (-infinity for digital silence).
    package var peakDecibels: Double
    /// Samples of the block that were NaN or infinite, left out of the RMS and peak (which then
    /// describe the finite samples; a block of only NaN reads as silence plus this count).
    package var nonFiniteSampleCount: Int

    /// Measures `frameCount` frames of each channel.
    package init(channels: [UnsafePointer<Float>], frameCount: Int) {
        var sum = 0.0
        var peak: Float = 0
        var bad = 0
        for channel in channels {
            for i in 0..<frameCount {
                let v = channel[i]
                guard v.isFinite else {
                    bad += 1
                    continue
                }
                sum += Double(v) * Double(v)
                peak = max(peak, abs(v))
            }
        }
        nonFiniteSampleCount = bad
        let count = Double(max(1, frameCount * channels.count - bad))
        rmsDecibels = Self.decibels((sum / count).squareRoot())
        peakDecibels = Self.decibels(Double(peak))
    }

    /// 20·log10(x), -infinity for 0.
    package static func decibels(_ x: Double) -> Double { x > 0 ? 20 * log10(x) : -.infinity }

    /// One line: `RMS  -9.03 dBFS  peak  -6.02 dBFS  |##########-------|` where the bar spans
    /// -60...0 dBFS (RMS as `#`, the peak marked with `|` inside the bar).
    package func line(width: Int = 40) -> String {
        func position(_ db: Double) -> Int {
            guard db.isFinite else { return 0 }
            return max(0, min(width, Int(((db + 60) / 60 * Double(width)).rounded())))
        }
        let filled = position(rmsDecibels)
        let peakAt = position(peakDecibels)
        var bar = Array(repeating: Character("-"), count: width)
        for i in 0..<filled { bar[i] = "#" }
        if peakAt > 0 { bar[peakAt - 1] = "|" }
        func text(_ db: Double) -> String { db.isFinite ? PrintfFormat.string("%6.2f", db) : "  -inf" }
        let bad = nonFiniteSampleCount > 0 ? "  \(nonFiniteSampleCount) non-finite" : ""
        return "RMS \(text(rmsDecibels)) dBFS  peak \(text(peakDecibels)) dBFS  [\(String(bar))]" + bad
    }
}
