// One equalizer band's settings: filter type, frequency, gain, q and bypass (a value).

/// The settings of one equalizer band: a second-order section with Audio EQ Cookbook
/// coefficients (see ``BiquadCoefficients``).
///
/// Thread safety: a value type; safe to pass between threads.
public struct EQBand: Sendable, Hashable {

    /// The cookbook filter shapes. `bandPass` is the constant-0-dB-peak-gain form.
    public enum FilterType: String, Sendable, Hashable, CaseIterable {
        case peak, lowShelf, highShelf, lowPass, highPass, bandPass, notch, allPass

        /// Whether the band's `gain` is used (peak and shelves); pass and notch types ignore it.
        public var usesGain: Bool { self == .peak || self == .lowShelf || self == .highShelf }

        /// The spec's default q: 1 for `peak`, 1/sqrt(2) (0.70710678) for every other type.
        public var defaultQ: Double { self == .peak ? 1 : 0.70710678 }
    }

    /// The filter shape.
    public var type: FilterType
    /// Centre, corner or shelf mid-point frequency, Hz.
    public var frequency: Double
    /// Gain in dB (peak and shelves only).
    public var gain: Double
    /// Quality factor; alpha = sin(w0)/(2q) for every type.
    public var q: Double
    /// When true the band passes its input unchanged (crossfaded, see ``Biquad``).
    public var bypass: Bool

    /// A band; `q` nil takes the type's default (1 for peak, 0.70710678 otherwise).
    public init(type: FilterType, frequency: Double, gain: Double = 0, q: Double? = nil, bypass: Bool = false) {
        self.type = type
        self.frequency = frequency
        self.gain = gain
        self.q = q ?? type.defaultQ
        self.bypass = bypass
    }
}
