// The oscillator node's properties.

/// An oscillator's waveform.
public enum Waveform: String, Sendable, Hashable, CaseIterable {
    case sine, square, sawtooth, triangle, noise
    /// Web Audio's custom waveform: the ``OscillatorProperties/real`` and
    /// ``OscillatorProperties/imag`` Fourier terms (a PeriodicWave).
    case custom
}

/// `properties` of an `oscillator` node.
///
/// Thread safety: a value type; safe to share between threads.
public struct OscillatorProperties: Sendable, Hashable {
    /// The waveform (default sine).
    public var waveform: Waveform
    /// Output channel count (default 1); every channel carries the same samples.
    public var channels: Int
    /// The noise generator's seed (default 0).
    public var seed: UInt64
    /// Where on the graph timeline the oscillator starts, seconds (default 0).
    public var startTime: Double
    /// Where it stops, seconds (nil: never).
    public var stopTime: Double?
    /// A custom waveform's cosine terms `a_k` (Web Audio's PeriodicWave `real`; `a_0` ignored), or nil.
    public var real: [Double]?
    /// A custom waveform's sine terms `b_k` (`imag`; `b_0` ignored), or nil.
    public var imag: [Double]?
    /// Whether the custom waveform keeps its terms' own scale (true) or is scaled to a peak of 1
    /// (false, Web Audio's default).
    public var disableNormalization: Bool = false

    /// Creates properties; the defaults are the spec's.
    public init(waveform: Waveform = .sine, channels: Int = 1, seed: UInt64 = 0, startTime: Double = 0, stopTime: Double? = nil) {
        self.waveform = waveform
        self.channels = channels
        self.seed = seed
        self.startTime = startTime
        self.stopTime = stopTime
    }
}
