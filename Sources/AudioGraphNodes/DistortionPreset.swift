// The distortion's factory presets (cf. AVAudioUnitDistortionPreset) as parameter sets of our own.

/// The `distortion` node's factory presets, AVAudioUnitDistortionPreset's 22 names in Apple's
/// order. Apple publishes neither the presets' values nor AUDistortion's algorithm, so each
/// preset here is a parameter set of our own, chosen from its name for the stages of
/// ``DistortionNode`` (the table and the reasoning are in Docs/Nodes.md, "distortion"): programs
/// get an effect of the named kind at a safe level, not Apple's exact sound.
///
/// Thread safety: a value type; safe to share between threads.
public enum DistortionPreset: String, Sendable, Hashable, CaseIterable {
    case drumsBitBrush, drumsBufferBeats, drumsLoFi
    case multiBrokenSpeaker, multiCellphoneConcert
    case multiDecimated1, multiDecimated2, multiDecimated3, multiDecimated4
    case multiDistortedFunk, multiDistortedCubed, multiDistortedSquared
    case multiEcho1, multiEcho2, multiEchoTight1, multiEchoTight2
    case multiEverythingIsBroken
    case speechAlienChatter, speechCosmicInterference, speechGoldenPi, speechRadioTower, speechWaves

    /// The parameter names, in AUDistortion's order (kDistortionParam_Delay = 0 ... FinalMix = 15).
    public static let parameterNames = [
        "delay", "decay", "delayMix", "decimation", "rounding", "decimationMix",
        "linearTerm", "squaredTerm", "cubicTerm", "polynomialMix",
        "ringModFreq1", "ringModFreq2", "ringModBalance", "ringModMix", "softClipGain", "finalMix",
    ]

    /// The preset's value of every parameter, in ``parameterNames``' order.
    public var values: [Double] {
        // delay ms, decay, delayMix | decimation, rounding, decimationMix | linear, squared, cubic, polyMix |
        // freq1, freq2, balance, ringMix | softClipGain dB, finalMix. "Off" stages have mix 0.
        switch self {
        case .drumsBitBrush:            return [0.1, 1, 0,    40, 60, 80,    1, 0, 0, 0,      100, 100, 50, 0,      -6, 50]
        case .drumsBufferBeats:         return [120, 2, 50,   25, 0, 50,     1, 0, 0, 0,      100, 100, 50, 0,      -6, 60]
        case .drumsLoFi:                return [0.1, 1, 0,    55, 55, 100,   1, 2, 0, 30,     100, 100, 50, 0,      -3, 100]
        case .multiBrokenSpeaker:       return [0.1, 1, 0,    10, 0, 30,     1, 8, 12, 90,    100, 100, 50, 0,      6, 100]
        case .multiCellphoneConcert:    return [0.1, 1, 0,    45, 50, 100,   1, 0, 4, 40,     100, 100, 50, 0,      0, 100]
        case .multiDecimated1:          return [0.1, 1, 0,    20, 20, 100,   1, 0, 0, 0,      100, 100, 50, 0,      -6, 100]
        case .multiDecimated2:          return [0.1, 1, 0,    40, 35, 100,   1, 0, 0, 0,      100, 100, 50, 0,      -6, 100]
        case .multiDecimated3:          return [0.1, 1, 0,    60, 50, 100,   1, 0, 0, 0,      100, 100, 50, 0,      -6, 100]
        case .multiDecimated4:          return [0.1, 1, 0,    80, 70, 100,   1, 0, 0, 0,      100, 100, 50, 0,      -6, 100]
        case .multiDistortedFunk:       return [10, 3, 20,    0, 0, 0,       1, 6, 3, 70,     60, 120, 50, 20,      0, 100]
        case .multiDistortedCubed:      return [0.1, 1, 0,    0, 0, 0,       1, 0, 15, 100,   100, 100, 50, 0,      0, 100]
        case .multiDistortedSquared:    return [0.1, 1, 0,    0, 0, 0,       1, 15, 0, 100,   100, 100, 50, 0,      0, 100]
        case .multiEcho1:               return [250, 1, 50,   0, 0, 0,       1, 0, 0, 0,      100, 100, 50, 0,      -6, 100]
        case .multiEcho2:               return [400, 0.5, 60, 0, 0, 0,       1, 0, 0, 0,      100, 100, 50, 0,      -6, 100]
        case .multiEchoTight1:          return [40, 2, 50,    0, 0, 0,       1, 0, 0, 0,      100, 100, 50, 0,      -6, 100]
        case .multiEchoTight2:          return [80, 1.5, 50,  20, 0, 30,     1, 0, 0, 0,      100, 100, 50, 0,      -6, 100]
        case .multiEverythingIsBroken:  return [60, 1, 40,    70, 75, 100,   1, 10, 10, 80,   220, 3000, 40, 50,    12, 100]
        case .speechAlienChatter:       return [20, 4, 20,    0, 0, 0,       1, 0, 0, 0,      500, 1250, 50, 100,   -6, 100]
        case .speechCosmicInterference: return [0.1, 1, 0,    30, 40, 50,    1, 0, 0, 0,      30, 4000, 30, 70,     -6, 100]
        case .speechGoldenPi:           return [31.4, 1.618, 30, 0, 0, 0,    1, 0, 0, 0,      314.159, 1618.034, 50, 60, -6, 100]
        case .speechRadioTower:         return [0.1, 1, 0,    35, 45, 100,   1, 0, 6, 50,     2, 2, 50, 15,         3, 100]
        case .speechWaves:              return [150, 1.5, 30, 0, 0, 0,       1, 0, 0, 0,      0.5, 3, 50, 80,       -6, 100]
        }
    }
}
