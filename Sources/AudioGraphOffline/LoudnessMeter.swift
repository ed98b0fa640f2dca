// EBU R128 loudness (integrated, range, true peak; momentary and short-term live) through libebur128.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AudioGraphCore
import CEBUR128

/// Why a ``LoudnessMeter`` cannot measure a stream.
public enum LoudnessMeterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libebur128 measures 1...64 channels at integer rates of 16...2822400 Hz.
    case unsupportedFormat(channelCount: Int, sampleRate: Double)
    /// libebur128 cannot be loaded (it is opened on first use; the loader's reason names it).
    case libraryMissing(library: String, reason: String)

    public var description: String {
        switch self {
        case let .libraryMissing(library, reason):
            return "cannot load \(library): \(reason)"
        case let .unsupportedFormat(channels, rate):
            return "cannot measure loudness of \(channels) channels at \(rate) Hz (1...64 channels, 16...2822400 Hz)"
        }
    }
}

/// EBU R128 / ITU-R BS.1770 loudness of a stream of float channels, measured by libebur128.
///
/// Feed it blocks of planar channels with ``add(_:frameCount:)``; read the results at any time.
/// In ``Mode/program`` it measures integrated loudness (gated, LUFS), loudness range (LU, EBU
/// Tech 3342) and true peak (dBTP, 4× oversampled, the largest over the channels); in
/// ``Mode/live`` only momentary (400 ms) and short-term (3 s) loudness, which cost less.
/// Channels are weighted as libebur128 does by default: 0 left, 1 right, 2 centre, and
/// surrounds at +1.5 dB (index 3, 4 for four channels; 3, 4 of five; 4, 5 of six, 3 being LFE,
/// unused); a mono stream is one front channel (BS.1770), so it reads 3 LU below the same
/// signal on both channels of a stereo stream.
///
/// Thread safety: not thread-safe; one thread at a time. Not real-time safe (libebur128
/// allocates as the program grows): use it on a control or file thread, never in a render callback.
public final class LoudnessMeter {
    /// What to measure.
    public enum Mode: Sendable {
        /// Integrated loudness, loudness range and true peak of the whole program (files, renders).
        case program
        /// Momentary and short-term loudness (a live meter).
        case live
    }

    /// Channels per frame.
    public let channelCount: Int
    /// The stream's sample rate (Hz).
    public let sampleRate: Double
    /// What this meter measures.
    public let mode: Mode

    // MARK: Owner thread only
    private var state: UnsafeMutablePointer<ebur128_state>?
    /// Interleaved frames for libebur128, `scratchFrames` long.
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchFrames = 4096

    /// - Throws: ``LoudnessMeterError/unsupportedFormat(channelCount:sampleRate:)`` outside
    ///   1...64 channels or 16...2822400 Hz, or at a non-integer rate.
    public init(channelCount: Int, sampleRate: Double, mode: Mode = .program) throws(LoudnessMeterError) {
        guard (1...64).contains(channelCount), sampleRate.isFinite, sampleRate.rounded() == sampleRate,
              (16...2_822_400).contains(sampleRate) else {
            throw .unsupportedFormat(channelCount: channelCount, sampleRate: sampleRate)
        }
        if let reason = LazyLibrary.ebur128.loadFailure { throw .libraryMissing(library: LazyLibrary.ebur128.name, reason: reason) }
        let flags: Int = switch mode {
        case .program: Int(EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue)
        case .live: Int(EBUR128_MODE_S.rawValue)
        }
        guard let s = ebur128_init(UInt32(channelCount), UInt(sampleRate), Int32(flags)) else {
            throw .unsupportedFormat(channelCount: channelCount, sampleRate: sampleRate)
        }
        state = s
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.mode = mode
        scratch = .allocate(capacity: scratchFrames * channelCount)
    }

    deinit {
        ebur128_destroy(&state)
        scratch.deallocate()
    }

    /// Measures `frameCount` more frames; `channels` holds one pointer per channel
    /// (``channelCount`` of them; missing channels count as silence, extra ones are ignored).
    public func add(_ channels: [UnsafePointer<Float>], frameCount: Int) {
        var done = 0
        while done < frameCount {
            let n = min(scratchFrames, frameCount - done)
            for c in 0..<channelCount {
                if c < channels.count {
                    let x = channels[c] + done
                    for f in 0..<n { scratch[f * channelCount + c] = x[f] }
                } else {
                    for f in 0..<n { scratch[f * channelCount + c] = 0 }
                }
            }
            // NaN or infinity would make every later measurement NaN (printed as silence): they
            // are measured as silence and counted instead.
            nonFiniteSampleCount += NonFiniteSamples.replaceWithSilence(scratch, count: n * channelCount)
            _ = ebur128_add_frames_float(state, scratch, n)
            done += n
        }
    }

    /// Samples added that were NaN or infinite: measured as silence, and named by ``summary``.
    public private(set) var nonFiniteSampleCount = 0

    /// Gated integrated loudness of everything added (LUFS; -infinity while nothing passed the
    /// -70 LUFS gate). ``Mode/program`` only (nan otherwise).
    public var integratedLoudness: Double { read(ebur128_loudness_global) }

    /// Loudness range (LU, EBU Tech 3342: the 10th to 95th percentile of the gated 3 s
    /// short-term loudness). ``Mode/program`` only (nan otherwise).
    public var loudnessRange: Double { read(ebur128_loudness_range) }

    /// Momentary loudness: the last 400 ms (LUFS; -infinity for silence).
    public var momentaryLoudness: Double { read(ebur128_loudness_momentary) }

    /// Short-term loudness: the last 3 s (LUFS; -infinity for silence).
    public var shortTermLoudness: Double { read(ebur128_loudness_shortterm) }

    /// The largest true peak over all channels (dBTP: dB relative to full scale, 4×
    /// oversampled; -infinity for silence). ``Mode/program`` only (nan otherwise).
    public var truePeakDecibels: Double {
        guard mode == .program else { return .nan }
        var top = 0.0
        for c in 0..<channelCount {
            var v = 0.0
            guard ebur128_true_peak(state, UInt32(c), &v) == Int32(EBUR128_SUCCESS.rawValue) else { return .nan }
            top = max(top, v)
        }
        return LevelMeter.decibels(top)
    }

    /// `integrated -23.0 LUFS, range 0.0 LU, true peak -20.0 dBTP` (``Mode/program``).
    public var summary: String {
        "integrated \(Self.text(integratedLoudness)) LUFS, range \(Self.text(loudnessRange)) LU, "
            + "true peak \(Self.text(truePeakDecibels)) dBTP"
            + (nonFiniteSampleCount > 0 ? ", \(nonFiniteSampleCount) non-finite samples (NaN or infinity) measured as silence" : "")
    }

    /// `M -23.0 LUFS  S -23.0 LUFS` (``Mode/live``, or any mode).
    public var liveLine: String {
        "M \(Self.text(momentaryLoudness, width: 6)) LUFS  S \(Self.text(shortTermLoudness, width: 6)) LUFS"
    }

    /// One decimal, `-inf` for -infinity (silence).
    static func text(_ x: Double, width: Int = 0) -> String {
        let s = x.isFinite ? PrintfFormat.string("%.1f", x) : (x.isNaN ? "nan" : (x < 0 ? "-inf" : "inf"))
        return String(repeating: " ", count: max(0, width - s.count)) + s
    }

    private func read(_ call: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>?) -> Int32) -> Double {
        var v = 0.0
        return call(state, &v) == Int32(EBUR128_SUCCESS.rawValue) ? v : .nan
    }
}
