// AVAudioConverter's status, prime and quality types, without the prefix, with Apple's raw values.
import Foundation

/// What an ``AudioConverterInputBlock`` reports, as `AVAudioConverterInputStatus`.
public enum AudioConverterInputStatus: Int, Sendable {
    /// The block returns a buffer of input.
    case haveData = 0
    /// No input for now: the conversion returns what it could convert (``AudioConverterOutputStatus/inputRanDry``);
    /// frames it holds are converted when more input comes or the stream ends.
    case noDataNow = 1
    /// The input has ended: the converter drains its filter and then reports ``AudioConverterOutputStatus/endOfStream``.
    case endOfStream = 2
}

/// The result of ``AudioConverter/convert(to:error:withInputFrom:)``, as `AVAudioConverterOutputStatus`.
public enum AudioConverterOutputStatus: Int, Sendable {
    /// The output buffer was filled (or, at the very end of the stream, holds the last frames).
    case haveData = 0
    /// The input block returned `.noDataNow` before the buffer was full: it holds what could be converted.
    case inputRanDry = 1
    /// The stream has ended and no frame was returned.
    case endOfStream = 2
    /// The conversion failed; the error pointer says why.
    case error = 3
}

/// How the converter handles its sample-rate converter's start-up latency, as
/// `AVAudioConverterPrimeMethod`.
public enum AudioConverterPrimeMethod: Int, Sendable {
    /// The first `primeInfo.leadingFrames` input frames are history: their output is not returned.
    case pre = 0
    /// Zero latency (the default): the output is time-aligned with the input, leading frames
    /// are taken as silence and the trailing frames are drained at the end of the stream.
    case normal = 1
    /// Latency mode: the output is delayed by the converter's start-up latency (`primeInfo.leadingFrames`
    /// input frames' worth of silence first).
    case none = 2
}

/// The frames of priming a sample-rate conversion takes, as `AudioConverterPrimeInfo`.
///
/// Thread safety: a value type.
public struct AudioConverterPrimeInfo: Sendable, Hashable {
    /// Input frames before the first frame of interest.
    public var leadingFrames: UInt32
    /// Input frames after the last frame of interest.
    public var trailingFrames: UInt32

    /// No priming frames.
    public init() {
        leadingFrames = 0
        trailingFrames = 0
    }

    /// Priming frames as given (CoreAudio's memberwise initializer).
    public init(leadingFrames: UInt32, trailingFrames: UInt32) {
        self.leadingFrames = leadingFrames
        self.trailingFrames = trailingFrames
    }
}

/// Encoder and sample-rate converter qualities, as `AVAudioQuality` (same raw values).
public enum AudioQuality: Int, Sendable, CaseIterable {
    case min = 0
    case low = 0x20
    case medium = 0x40
    case high = 0x60
    case max = 0x7F
}

/// The block ``AudioConverter/convert(to:error:withInputFrom:)`` calls for input, as
/// `AVAudioConverterInputBlock` (same shape and annotations: not `@Sendable`; the converter
/// calls it synchronously, on the caller's thread, before `convert` returns). It receives the
/// number of packets (frames, for PCM) that would complete the request, sets the status, and
/// returns a buffer in the converter's input format for `.haveData` (more or fewer frames than
/// asked are fine), nil otherwise.
public typealias AudioConverterInputBlock = (_ inNumberOfPackets: AudioPacketCount,
                                             _ outStatus: UnsafeMutablePointer<AudioConverterInputStatus>) -> AudioPCMBuffer?

/// Foundation's error out-parameter (`NSError **`), which swift-corelibs-foundation does not
/// define: `var error: NSError?` passed as `&error`, as on Apple's platforms.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

/// Settings key: the sample-rate converter's algorithm (one of the `AVSampleRateConverterAlgorithm_` values).
public let AVSampleRateConverterAlgorithmKey = "AVSampleRateConverterAlgorithmKey"
/// Settings key: the sample-rate converter's quality (an ``AudioQuality`` raw value).
public let AVSampleRateConverterAudioQualityKey = "AVSampleRateConverterAudioQualityKey"
/// Sample-rate converter algorithm: the default (the quality chooses the library; see ``AudioConverter``).
public let AVSampleRateConverterAlgorithm_Normal = "normal"
/// Sample-rate converter algorithm for mastering: libsoxr's very-high-quality converter whatever the quality.
public let AVSampleRateConverterAlgorithm_Mastering = "mastering"
/// Sample-rate converter algorithm with minimum-phase filters: libsoxr, minimum phase (no pre-ringing, less latency).
public let AVSampleRateConverterAlgorithm_MinimumPhase = "minimumPhase"
