// The eq node's properties: its bands, given one by one or as a named preset.

/// The Audio EQ Cookbook filter of one band.
public enum EQFilterType: String, Sendable, Hashable, CaseIterable {
    case peak, lowShelf, highShelf, lowPass, highPass, bandPass, notch, allPass

    /// Whether the band's gain matters (peak and shelves); pass, notch and all-pass ignore it.
    public var usesGain: Bool { self == .peak || self == .lowShelf || self == .highShelf }

    /// The default q: 1 for peak, 0.70710678 otherwise.
    public var defaultQ: Double { self == .peak ? 1 : 0.70710678 }
}

extension EQBand {
    /// The filter type under the name the DSP module uses (`EQBand.FilterType`).
    public typealias FilterType = EQFilterType
}

/// One eq band: `{ "type", "frequency", "gain", "q", "bypass" }`. Its fields are the initial
/// values of the parameters `band.N.frequency`, `band.N.gain`, `band.N.q`, `band.N.bypass`.
public struct EQBand: Sendable, Hashable {
    /// The filter.
    public var type: EQFilterType
    /// Centre or corner frequency, Hz (10...sampleRate/2; default 1000).
    public var frequency: Double
    /// Gain, dB (-96...24; default 0).
    public var gain: Double
    /// Quality (0.05...100; default per type).
    public var q: Double
    /// Whether the band is bypassed (default false).
    public var bypass: Bool

    /// Creates a band; q defaults to the type's default.
    public init(type: EQFilterType, frequency: Double = 1000, gain: Double = 0, q: Double? = nil, bypass: Bool = false) {
        self.type = type
        self.frequency = frequency
        self.gain = gain
        self.q = q ?? type.defaultQ
        self.bypass = bypass
    }
}

/// `properties` of an `eq` node.
///
/// Thread safety: a value type; safe to share between threads.
public struct EQProperties: Sendable, Hashable {
    /// The bands in processing order (a preset's bands when `preset` is set).
    public var bands: [EQBand]
    /// The preset the bands came from, nil when given one by one.
    public var preset: EQPreset?
    /// Whether band changes glide and bypass crossfades over 10 ms (true); false: Web Audio's
    /// un-smoothed changes (coefficients exact from the next frame, bypass a switch).
    public var smoothing: Bool = true

    /// The most bands one eq accepts.
    public static let maximumBandCount = 64

    /// Creates properties from bands.
    public init(bands: [EQBand] = []) {
        self.bands = bands
        self.preset = nil
    }

    /// Creates properties from a preset (its bands at `sampleRate`, see ``EQPreset/bands(sampleRate:)``).
    public init(preset: EQPreset, sampleRate: Double = 48000) {
        self.bands = preset.bands(sampleRate: sampleRate)
        self.preset = preset
    }
}
