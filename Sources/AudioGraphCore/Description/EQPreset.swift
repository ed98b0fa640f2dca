// The eq's named curves: the project's own, each a short list of cookbook bands.

/// A named eq curve (`"preset"`), expanded to bands when loaded. The curves are ours (documented
/// in Docs/GraphFormat.md): gentle shelves and peaks meant as starting points.
public enum EQPreset: String, Sendable, Hashable, CaseIterable {
    case flat, bassBooster, bassReducer, trebleBooster, trebleReducer, vocalBooster, loudness, acoustic,
         dance, electronic, hipHop, jazz, piano, pop, rock, smallSpeakers, spokenWord

    /// The preset's bands at `sampleRate`: a band frequency above 0.45 × sampleRate is lowered
    /// to it, so every preset is valid at low rates.
    public func bands(sampleRate: Double) -> [EQBand] {
        bands.map { band in
            var band = band
            band.frequency = min(band.frequency, max(10, 0.45 * sampleRate))
            return band
        }
    }

    /// The preset's bands as designed (at 44.1 kHz and above), in processing order.
    public var bands: [EQBand] {
        switch self {
        case .flat: return []
        case .bassBooster: return [EQBand(type: .lowShelf, frequency: 100, gain: 6)]
        case .bassReducer: return [EQBand(type: .lowShelf, frequency: 100, gain: -6)]
        case .trebleBooster: return [EQBand(type: .highShelf, frequency: 8000, gain: 6)]
        case .trebleReducer: return [EQBand(type: .highShelf, frequency: 8000, gain: -6)]
        case .vocalBooster:
            return [EQBand(type: .lowShelf, frequency: 150, gain: -2), EQBand(type: .peak, frequency: 2500, gain: 4)]
        case .loudness:
            return [EQBand(type: .lowShelf, frequency: 100, gain: 6), EQBand(type: .highShelf, frequency: 10000, gain: 4)]
        case .acoustic:
            return [EQBand(type: .lowShelf, frequency: 120, gain: 3), EQBand(type: .peak, frequency: 500, gain: -1),
                    EQBand(type: .peak, frequency: 3000, gain: 2), EQBand(type: .highShelf, frequency: 10000, gain: 2)]
        case .dance:
            return [EQBand(type: .lowShelf, frequency: 80, gain: 5), EQBand(type: .peak, frequency: 1000, gain: -2),
                    EQBand(type: .highShelf, frequency: 8000, gain: 3)]
        case .electronic:
            return [EQBand(type: .lowShelf, frequency: 80, gain: 4), EQBand(type: .peak, frequency: 500, gain: -1),
                    EQBand(type: .peak, frequency: 2000, gain: 1), EQBand(type: .highShelf, frequency: 10000, gain: 4)]
        case .hipHop:
            return [EQBand(type: .lowShelf, frequency: 60, gain: 5), EQBand(type: .peak, frequency: 250, gain: 2),
                    EQBand(type: .peak, frequency: 2000, gain: -1), EQBand(type: .highShelf, frequency: 8000, gain: 2)]
        case .jazz:
            return [EQBand(type: .lowShelf, frequency: 100, gain: 3), EQBand(type: .peak, frequency: 1000, gain: -2),
                    EQBand(type: .highShelf, frequency: 8000, gain: 3)]
        case .piano:
            return [EQBand(type: .lowShelf, frequency: 100, gain: 2), EQBand(type: .peak, frequency: 2000, gain: 2),
                    EQBand(type: .highShelf, frequency: 8000, gain: 3)]
        case .pop:
            return [EQBand(type: .lowShelf, frequency: 80, gain: -1), EQBand(type: .peak, frequency: 1000, gain: 3),
                    EQBand(type: .highShelf, frequency: 10000, gain: -1)]
        case .rock:
            return [EQBand(type: .lowShelf, frequency: 100, gain: 4), EQBand(type: .peak, frequency: 1000, gain: -2),
                    EQBand(type: .highShelf, frequency: 8000, gain: 4)]
        case .smallSpeakers:
            return [EQBand(type: .highPass, frequency: 120), EQBand(type: .lowShelf, frequency: 200, gain: 4),
                    EQBand(type: .highShelf, frequency: 8000, gain: 2)]
        case .spokenWord:
            return [EQBand(type: .highPass, frequency: 80), EQBand(type: .peak, frequency: 3000, gain: 3),
                    EQBand(type: .highShelf, frequency: 10000, gain: -2)]
        }
    }
}
