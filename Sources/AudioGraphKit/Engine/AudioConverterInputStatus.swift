// AVAudioConverterInputStatus without the prefix: what a converter's input block reports.

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
