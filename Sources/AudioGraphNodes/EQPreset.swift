// The eq's named curves: the project's own, each a short list of cookbook bands.

/// A named equalizer curve (`"preset"`), expanded to bands when loaded. The curves are the
/// project's own (the same settings as the DSP module's presets), listed on each case and in
/// Docs/GraphFormat.md: shelves for broad tilts, wide peaks (q 0.7-1.2) for tone, gains within ±9 dB.
///
/// Thread safety: a value type; ``bands`` builds an array (control thread).
public enum EQPreset: String, Sendable, Hashable, CaseIterable {
    /// No bands: the signal passes unchanged.
    case flat
    /// lowShelf 100 Hz +6 dB q 0.707; peak 60 Hz +3 dB q 1.0.
    case bassBooster
    /// lowShelf 100 Hz -6 dB q 0.707; peak 60 Hz -3 dB q 1.0.
    case bassReducer
    /// highShelf 6 kHz +6 dB q 0.707; peak 10 kHz +2 dB q 0.9.
    case trebleBooster
    /// highShelf 6 kHz -6 dB q 0.707; peak 10 kHz -2 dB q 0.9.
    case trebleReducer
    /// highPass 90 Hz q 0.707; peak 250 Hz -2 dB q 1.0; peak 1.5 kHz +3 dB q 0.9;
    /// peak 3 kHz +4 dB q 1.0; peak 5 kHz +2 dB q 1.2.
    case vocalBooster
    /// lowShelf 80 Hz +6 dB q 0.707; peak 1 kHz -1.5 dB q 0.7; highShelf 10 kHz +4 dB q 0.707
    /// (a gentle Fletcher–Munson compensation for quiet listening).
    case loudness
    /// lowShelf 120 Hz +3 dB q 0.707; peak 400 Hz -1 dB q 1.0; peak 3 kHz +2 dB q 1.0;
    /// highShelf 10 kHz +2.5 dB q 0.707.
    case acoustic
    /// peak 60 Hz +5 dB q 1.0; peak 300 Hz -2 dB q 1.0; peak 2.5 kHz +1.5 dB q 1.0;
    /// highShelf 8 kHz +3.5 dB q 0.707.
    case dance
    /// lowShelf 80 Hz +4.5 dB q 0.707; peak 500 Hz -2 dB q 0.9; peak 2 kHz +1 dB q 1.0;
    /// highShelf 9 kHz +4 dB q 0.707.
    case electronic
    /// peak 60 Hz +5 dB q 0.9; peak 150 Hz +2 dB q 1.0; peak 1 kHz -1.5 dB q 1.0;
    /// peak 4 kHz +1.5 dB q 1.0; highShelf 12 kHz +2 dB q 0.707.
    case hipHop
    /// lowShelf 100 Hz +3 dB q 0.707; peak 800 Hz -1.5 dB q 1.0; peak 3 kHz +2 dB q 1.0;
    /// highShelf 8 kHz +3 dB q 0.707.
    case jazz
    /// peak 100 Hz +2 dB q 1.0; peak 500 Hz +1 dB q 1.0; peak 3 kHz +2.5 dB q 1.0;
    /// highShelf 10 kHz +2 dB q 0.707.
    case piano
    /// peak 100 Hz -1 dB q 1.0; peak 1 kHz +2 dB q 0.8; peak 3 kHz +3 dB q 1.0;
    /// highShelf 10 kHz +1 dB q 0.707.
    case pop
    /// lowShelf 90 Hz +4.5 dB q 0.707; peak 500 Hz -3 dB q 0.9; peak 2.5 kHz +2 dB q 1.0;
    /// highShelf 8 kHz +4 dB q 0.707.
    case rock
    /// highPass 80 Hz q 0.707; peak 150 Hz +5 dB q 1.2; peak 3 kHz -2 dB q 1.0;
    /// highShelf 8 kHz +3 dB q 0.707 (what small drivers cannot do below ~100 Hz is cut rather
    /// than boosted; the upper bass carries the impression of bass instead).
    case smallSpeakers
    /// highPass 100 Hz q 0.707; peak 300 Hz -2 dB q 1.0; peak 2.5 kHz +4 dB q 1.0;
    /// lowPass 10 kHz q 0.707 (intelligibility: rumble and hiss out, presence up).
    case spokenWord

    /// The preset's bands at `sampleRate`: a band frequency above 0.45 × sampleRate is lowered
    /// to it, so every preset is valid at low rates.
    public func bands(sampleRate: Double) -> [EQBand] {
        bands.map { band in
            var band = band
            band.frequency = min(band.frequency, max(10, 0.45 * sampleRate))
            return band
        }
    }

    /// The preset's bands as designed (for rates of 44.1 kHz and above), in processing order.
    public var bands: [EQBand] {
        func peak(_ f: Double, _ g: Double, _ q: Double) -> EQBand { EQBand(type: .peak, frequency: f, gain: g, q: q) }
        func lowShelf(_ f: Double, _ g: Double) -> EQBand { EQBand(type: .lowShelf, frequency: f, gain: g) }
        func highShelf(_ f: Double, _ g: Double) -> EQBand { EQBand(type: .highShelf, frequency: f, gain: g) }
        func highPass(_ f: Double) -> EQBand { EQBand(type: .highPass, frequency: f) }
        func lowPass(_ f: Double) -> EQBand { EQBand(type: .lowPass, frequency: f) }
        switch self {
        case .flat: return []
        case .bassBooster: return [lowShelf(100, 6), peak(60, 3, 1.0)]
        case .bassReducer: return [lowShelf(100, -6), peak(60, -3, 1.0)]
        case .trebleBooster: return [highShelf(6000, 6), peak(10000, 2, 0.9)]
        case .trebleReducer: return [highShelf(6000, -6), peak(10000, -2, 0.9)]
        case .vocalBooster:
            return [highPass(90), peak(250, -2, 1.0), peak(1500, 3, 0.9), peak(3000, 4, 1.0), peak(5000, 2, 1.2)]
        case .loudness: return [lowShelf(80, 6), peak(1000, -1.5, 0.7), highShelf(10000, 4)]
        case .acoustic: return [lowShelf(120, 3), peak(400, -1, 1.0), peak(3000, 2, 1.0), highShelf(10000, 2.5)]
        case .dance: return [peak(60, 5, 1.0), peak(300, -2, 1.0), peak(2500, 1.5, 1.0), highShelf(8000, 3.5)]
        case .electronic: return [lowShelf(80, 4.5), peak(500, -2, 0.9), peak(2000, 1, 1.0), highShelf(9000, 4)]
        case .hipHop:
            return [peak(60, 5, 0.9), peak(150, 2, 1.0), peak(1000, -1.5, 1.0), peak(4000, 1.5, 1.0), highShelf(12000, 2)]
        case .jazz: return [lowShelf(100, 3), peak(800, -1.5, 1.0), peak(3000, 2, 1.0), highShelf(8000, 3)]
        case .piano: return [peak(100, 2, 1.0), peak(500, 1, 1.0), peak(3000, 2.5, 1.0), highShelf(10000, 2)]
        case .pop: return [peak(100, -1, 1.0), peak(1000, 2, 0.8), peak(3000, 3, 1.0), highShelf(10000, 1)]
        case .rock: return [lowShelf(90, 4.5), peak(500, -3, 0.9), peak(2500, 2, 1.0), highShelf(8000, 4)]
        case .smallSpeakers: return [highPass(80), peak(150, 5, 1.2), peak(3000, -2, 1.0), highShelf(8000, 3)]
        case .spokenWord: return [highPass(100), peak(300, -2, 1.0), peak(2500, 4, 1.0), lowPass(10000)]
        }
    }
}
