// The analyser node's properties (the Web Audio AnalyserNode's attributes).

/// `properties` of an `analyser` node: the Web Audio `AnalyserNode` attributes.
///
/// Thread safety: a value type; safe to share between threads.
public struct AnalyserProperties: Sendable, Hashable {
    /// The smallest `fftSize`.
    public static let minimumFFTSize = 32
    /// The largest `fftSize`.
    public static let maximumFFTSize = 32768

    /// Frames analysed: a power of two in 32...32768 (default 2048).
    public var fftSize: Int
    /// Averaging of each spectrum with the previous one, 0...1 (default 0.8).
    public var smoothingTimeConstant: Double
    /// The dB value mapped to 0 by the byte frequency data (default -100).
    public var minDecibels: Double
    /// The dB value mapped to 255 by the byte frequency data (default -30); above `minDecibels`.
    public var maxDecibels: Double

    /// Creates properties.
    public init(fftSize: Int = 2048, smoothingTimeConstant: Double = 0.8, minDecibels: Double = -100,
                maxDecibels: Double = -30) {
        self.fftSize = fftSize
        self.smoothingTimeConstant = smoothingTimeConstant
        self.minDecibels = minDecibels
        self.maxDecibels = maxDecibels
    }

    /// Why these properties are invalid (a one-line reason naming the property), or nil.
    public var problem: (property: String, reason: String)? {
        if fftSize < Self.minimumFFTSize || fftSize > Self.maximumFFTSize || fftSize & (fftSize - 1) != 0 {
            return ("fftSize", "\(fftSize) is not a power of two in \(Self.minimumFFTSize)...\(Self.maximumFFTSize)")
        }
        if !(0...1).contains(smoothingTimeConstant) {
            return ("smoothingTimeConstant", "\(smoothingTimeConstant) is outside 0...1")
        }
        if !minDecibels.isFinite { return ("minDecibels", "\(minDecibels) is not a finite number") }
        if !maxDecibels.isFinite { return ("maxDecibels", "\(maxDecibels) is not a finite number") }
        if minDecibels >= maxDecibels {
            return ("maxDecibels", "maxDecibels \(maxDecibels) must be above minDecibels \(minDecibels)")
        }
        return nil
    }
}
