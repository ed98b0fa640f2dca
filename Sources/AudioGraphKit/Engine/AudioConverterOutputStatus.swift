// AVAudioConverterOutputStatus without the prefix: the result of a stream conversion.

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
