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
    /// Values of a band that belongs to no equalizer (the environment reverb's filter).
    private var standalone: [String: Double] = [:]
    private let isStandalone: Bool
    /// Called after a standalone band's value changed (the environment resends its reverb).
    var standaloneChanged: (() -> Void)?

    init(unit: AudioUnitEQ, index: Int) {
        self.unit = unit
        self.index = index
        isStandalone = false
    }

    /// A band that belongs to no equalizer: its values are kept here.
    init(standaloneWithFrequency frequency: Double) {
        index = 0
        isStandalone = true
        standalone = ["frequency": frequency, "gain": 0, "bypass": 0]
    }

    /// The graph's band for these values (type, frequency, gain, Q, bypass).
    var graphBand: EQBand {
        EQBand(type: filterType.bandType, frequency: value("frequency", default: 1000), gain: value("gain", default: 0),
               q: value("q", default: filterType.usesBandwidth ? Self.q(bandwidth: bandwidth) : 0.70710678),
               bypass: bypass)
    }

    private func value(_ name: String, default d: Double) -> Double {
        isStandalone ? standalone[name] ?? d : unit?.storedParameter("band.\(index).\(name)", default: d) ?? d
    }

    /// Sets value `name`, clamped to the eq table's range (a unit's band: at its graph node's
    /// rate once it exists); NaN is ignored.
    private func set(_ name: String, _ v: Double) {
        if isStandalone {
            guard !v.isNaN, let info = ParameterTable.eq.parameterInfo(for: ParameterAddress(scope: .global, element: 0, group: "band", name: name),
                                                                   sampleRate: .infinity, inputBusCount: 0, bandCount: 1) else { return }
            standalone[name] = info.clamped(v)
            standaloneChanged?()
        } else {
            unit?.setBandParameter(index, name, v)
        }
    }

    /// The band's filter shape (default `.parametric`).
    public var filterType: AudioUnitEQFilterType = .parametric {
        didSet {
            guard filterType != oldValue else { return }
            unit?.bandTypeChanged()
            if isStandalone { standaloneChanged?() }
            applyQ()
        }
    }

    /// Centre or cutoff frequency, Hz (10...half the rate; default 1000). A value outside is
    /// clamped to the range, as an Audio Unit's parameter (the eq table's; Nyquist applies once
    /// the engine knows its rate).
    public var frequency: Float {
        get { Float(value("frequency", default: 1000)) }
        set { set("frequency", Double(newValue)) }
    }

    /// The range of ``bandwidth`` in octaves (AVAudioUnitEQFilterParameters' 0.05...5.0).
    static let bandwidthRange: ClosedRange<Float> = 0.05...5

    /// Bandwidth in octaves, 0.05...5 (default 0.5); a value outside is clamped, NaN ignored.
    public var bandwidth: Float {
        get { bandwidthValue }
        set {
            guard !newValue.isNaN else { return }
            bandwidthValue = min(max(newValue, Self.bandwidthRange.lowerBound), Self.bandwidthRange.upperBound)
            applyQ()
        }
    }
    private var bandwidthValue: Float = 0.5

    /// Gain in dB, -96...24 (default 0; shapes without gain ignore it); clamped to the range.
    public var gain: Float {
        get { Float(value("gain", default: 0)) }
        set { set("gain", Double(newValue)) }
    }

    /// Whether the band is bypassed (default true).
    public var bypass: Bool {
        get {
            // While the whole unit is bypassed, the band's own setting is the one kept aside.
            if let unit, unit.bypass, index < unit.bandBypassBeforeUnitBypass.count {
                return unit.bandBypassBeforeUnitBypass[index] != 0
            }
            return value("bypass", default: 1) != 0
        }
        set { set("bypass", newValue ? 1 : 0) }
    }

    /// The cookbook Q for a bandwidth in octaves.
    static func q(bandwidth: Float) -> Double {
        1 / (2 * sinh(log(2) / 2 * Double(bandwidth)))
    }

    func applyQ() {
        let q = filterType.usesBandwidth ? Self.q(bandwidth: bandwidth) : 0.70710678
        set("q", q)
    }
}
