// Why a Resampler could not be created (thrown on the control thread only).

/// Why ``Resampler/init(channelCount:inputSampleRate:outputSampleRate:quality:provider:)`` failed.
package enum ResamplerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The output/input rate ratio is outside libsamplerate's 1/256 ... 256, or a rate is not
    /// positive and finite.
    case unsupportedRatio(inputSampleRate: Double, outputSampleRate: Double)
    /// The channel count is not positive.
    case invalidChannelCount(Int)
    /// libsamplerate refused to create its state (its error code and message).
    case libsamplerate(code: Int32, message: String)
    /// libsoxr refused to create or set up its resampler (its message).
    case libsoxr(message: String)
    /// The conversion's library (libsoxr or libsamplerate) cannot be loaded (the loader's reason).
    case libraryMissing(library: String, reason: String)

    /// One line for messages.
    package var description: String {
        switch self {
        case let .unsupportedRatio(input, output): return "cannot convert \(input) Hz to \(output) Hz (ratio out of range)"
        case let .invalidChannelCount(count): return "invalid channel count \(count)"
        case let .libsamplerate(code, message): return "libsamplerate error \(code): \(message)"
        case let .libsoxr(message): return "libsoxr: \(message)"
        case let .libraryMissing(library, reason): return "cannot load \(library): \(reason)"
        }
    }
}
