// The converter node's properties.

/// A converter's sample-rate conversion quality: `best` is libsoxr's very-high-quality
/// converter (VHQ, steep, linear phase), measured at least as good as libsamplerate's best and
/// far faster; `sincBest` (libsamplerate's SRC_SINC_BEST_QUALITY, what `best` was before),
/// `medium`, `fastest`, `linear` and `zeroOrderHold` are libsamplerate's converters of those
/// names (see Docs/Nodes.md for the measured figures).
public enum ConverterQuality: String, Sendable, Hashable, CaseIterable {
    case best, medium, fastest, linear, zeroOrderHold, sincBest
}

/// `properties` of a `converter` node.
///
/// Thread safety: a value type; safe to share between threads.
public struct ConverterProperties: Sendable, Hashable {
    /// The output format; omitted fields are the input's.
    public var format: FormatDescription
    /// Resampling quality (default best).
    public var quality: ConverterQuality
    /// Output channel i takes input channel `channelMap[i]`; -1 is silence. Nil: up/down-mix.
    public var channelMap: [Int]?

    /// Creates properties.
    public init(format: FormatDescription = FormatDescription(), quality: ConverterQuality = .best, channelMap: [Int]? = nil) {
        self.format = format
        self.quality = quality
        self.channelMap = channelMap
    }
}
