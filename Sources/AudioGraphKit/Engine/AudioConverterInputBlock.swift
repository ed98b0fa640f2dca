// AVAudioConverterInputBlock without the prefix, Foundation's error out-parameter, and the sample-rate converter settings keys.
import Foundation

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
