// One band of the engine API's equalizer (cf. AVAudioUnitEQFilterParameters).
import AudioGraphNodes
import Foundation

/// The filter shapes of an ``AudioUnitEQ`` band (cf. AVAudioUnitEQFilterType), each one
/// Audio EQ Cookbook biquad.
public enum AudioUnitEQFilterType: Int, Sendable, CaseIterable {
    case parametric = 0, lowPass, highPass, resonantLowPass, resonantHighPass, bandPass, bandStop,
         lowShelf, highShelf, resonantLowShelf, resonantHighShelf

    /// The graph's band type.
    var bandType: EQFilterType {
        switch self {
        case .parametric: return .peak
        case .lowPass, .resonantLowPass: return .lowPass
        case .highPass, .resonantHighPass: return .highPass
        case .bandPass: return .bandPass
        case .bandStop: return .notch
        case .lowShelf, .resonantLowShelf: return .lowShelf
        case .highShelf, .resonantHighShelf: return .highShelf
        }
    }

    /// Whether the band's Q follows `bandwidth` (else Butterworth, Q = 1/√2).
    var usesBandwidth: Bool {
        switch self {
        case .lowPass, .highPass, .lowShelf, .highShelf: return false
        default: return true
        }
    }
}

/// One band of an ``AudioUnitEQ`` (cf. AVAudioUnitEQFilterParameters): `filterType`,
/// `frequency` (Hz), `bandwidth` (octaves, 0.05...5, as Q = 1 / (2 sinh(ln 2 / 2 · bandwidth))),
/// `gain` (dB, -96...24) and `bypass` (true by default, as AUNBandEQ's bands). Changing the
/// frequency, bandwidth, gain or bypass applies at once (lock-free); changing the type gives the
/// unit a new graph node in one change list.
///
/// Thread safety: the engine's.
public final class AudioUnitEQFilterParameters: @unchecked Sendable {
    private weak var unit: AudioUnitEQ?
    let index: Int

    init(unit: AudioUnitEQ, index: Int) {
        self.unit = unit
        self.index = index
    }

    /// The band's filter shape (default `.parametric`).
    public var filterType: AudioUnitEQFilterType = .parametric {
        didSet {
            guard filterType != oldValue else { return }
            unit?.bandTypeChanged()
            applyQ()
        }
    }

    /// Centre or cutoff frequency, Hz (20...half the rate; default 1000).
    public var frequency: Float {
        get { Float(unit?.storedParameter("band.\(index).frequency", default: 1000) ?? 1000) }
        set { unit?.setBandParameter(index, "frequency", Double(newValue), 10...96000) }
    }

    /// Bandwidth in octaves, 0.05...5 (default 0.5).
    public var bandwidth: Float = 0.5 {
        didSet {
            guard (0.05...5).contains(bandwidth) else {
                engineProgrammerError("bandwidth", unit, "\(bandwidth) is outside 0.05...5 octaves")
            }
            applyQ()
        }
    }

    /// Gain in dB, -96...24 (default 0; shapes without gain ignore it).
    public var gain: Float {
        get { Float(unit?.storedParameter("band.\(index).gain", default: 0) ?? 0) }
        set { unit?.setBandParameter(index, "gain", Double(newValue), -96...24) }
    }

    /// Whether the band is bypassed (default true).
    public var bypass: Bool {
        get { (unit?.storedParameter("band.\(index).bypass", default: 1) ?? 1) != 0 }
        set { unit?.setBandParameter(index, "bypass", newValue ? 1 : 0, 0...1) }
    }

    /// The cookbook Q for a bandwidth in octaves.
    static func q(bandwidth: Float) -> Double {
        1 / (2 * sinh(log(2) / 2 * Double(bandwidth)))
    }

    func applyQ() {
        let q = filterType.usesBandwidth ? Self.q(bandwidth: bandwidth) : 0.70710678
        unit?.setBandParameter(index, "q", min(max(q, 0.05), 100), 0.05...100)
    }
}
