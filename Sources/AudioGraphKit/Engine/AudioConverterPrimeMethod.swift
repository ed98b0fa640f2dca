// AVAudioConverterPrimeMethod without the prefix: how a rate conversion's start-up latency is handled.

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
