// CoreAudio's AudioConverterPrimeInfo: the priming frames of a sample-rate conversion.

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
