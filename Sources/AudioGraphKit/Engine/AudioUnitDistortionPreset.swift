// The engine API's distortion presets (cf. AVAudioUnitDistortionPreset).
import AudioGraphNodes

/// AVAudioUnitDistortion's factory presets (cf. AVAudioUnitDistortionPreset), with Apple's raw
/// values. Each is a parameter set of our own (``DistortionPreset/values``; Apple does not
/// publish its values): the table and the reasoning are in Docs/Nodes.md, "distortion".
public enum AudioUnitDistortionPreset: Int, Sendable, CaseIterable {
    case drumsBitBrush = 0, drumsBufferBeats, drumsLoFi, multiBrokenSpeaker, multiCellphoneConcert,
         multiDecimated1, multiDecimated2, multiDecimated3, multiDecimated4, multiDistortedFunk,
         multiDistortedCubed, multiDistortedSquared, multiEcho1, multiEcho2, multiEchoTight1,
         multiEchoTight2, multiEverythingIsBroken, speechAlienChatter, speechCosmicInterference,
         speechGoldenPi, speechRadioTower, speechWaves

    /// The graph format's name of this preset (the `distortion` node's `preset`).
    var graphPreset: DistortionPreset { DistortionPreset.allCases[rawValue] }
}
