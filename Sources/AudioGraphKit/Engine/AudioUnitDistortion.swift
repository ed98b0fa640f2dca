// The engine API's distortion (cf. AVAudioUnitDistortion) over the graph's distortion node.
import AudioGraphNodes
import Foundation

/// A multistage distortion (cf. AVAudioUnitDistortion), the graph's `distortion` node: an echo,
/// a decimator, a polynomial waveshaper, a ring modulator and a soft clipper (formulas in
/// Docs/Nodes.md). ``loadFactoryPreset(_:)`` sets all of AUDistortion's 16 parameters to one of
/// the 22 presets; ``preGain`` is AUDistortion's soft-clip gain (-80...20 dB, -6), the gain in
/// front of the stages; ``wetDryMix`` is its final mix (0...100 %, 50). A new unit has
/// AUDistortion's default values. Values outside a range are clamped, as an Audio Unit's (NaN is
/// ignored). ``AudioUnitEffect/bypass`` sets the final mix to 0 (the input passes bit for bit)
/// and keeps the value you set.
///
/// The other 14 parameters, which Apple reaches through `auAudioUnit.parameterTree`, are
/// ``setValue(_:forParameter:)`` / ``value(forParameter:)`` here, by AUDistortion's names
/// (``parameterNames``).
///
/// Thread safety: the engine's; parameters and presets may be set from any thread (applied at
/// the next slice; a preset's 16 values land in the same slice).
public final class AudioUnitDistortion: AudioUnitEffect, @unchecked Sendable {
    /// Makes a distortion to attach to an engine.
    public init() { super.init(kindName: "distortion") }

    override var parameterTable: ParameterTable { .distortion }

    private var finalMixValue: Float = 50

    /// AUDistortion's parameter names in its order (`kDistortionParam_Delay` ... `FinalMix`).
    public static var parameterNames: [String] { DistortionPreset.parameterNames }

    /// Sets every parameter to `preset`'s values; on a running engine they change together at
    /// the next slice.
    public func loadFactoryPreset(_ preset: AudioUnitDistortionPreset) {
        let apply = {
            for (name, value) in zip(DistortionPreset.parameterNames, preset.graphPreset.values) {
                self.setValue(Float(value), forParameter: name)
            }
        }
        if let engine {
            // One change list, so the 16 values reach the render thread together.
            try? engine.performChanges { apply() }
        } else {
            apply()
        }
    }

    /// The gain in front of the distortion stages, dB, -80...20 (-6): AUDistortion's soft-clip gain.
    public var preGain: Float {
        get { value(forParameter: "softClipGain") }
        set { setValue(newValue, forParameter: "softClipGain") }
    }

    /// The distorted share of the output, percent, 0...100 (50): AUDistortion's final mix.
    public var wetDryMix: Float {
        get { value(forParameter: "finalMix") }
        set { setValue(newValue, forParameter: "finalMix") }
    }

    /// Sets one of AUDistortion's parameters by name (``parameterNames``), clamped to its range;
    /// NaN is ignored. A name that is not one of them is a programmer error.
    public func setValue(_ value: Float, forParameter name: String) {
        guard DistortionPreset.parameterNames.contains(name) else {
            engineProgrammerError("setValue(_:forParameter:)", self, "no parameter \(name) (a distortion has \(DistortionPreset.parameterNames.joined(separator: ", ")))")
        }
        if name == "finalMix" {
            finalMixValue = tableClamped(name, value, fallback: finalMixValue)
            if bypass { return }
        }
        setStoredParameter(name, Double(value), call: name)
    }

    /// The value of one of AUDistortion's parameters (its default until set).
    public func value(forParameter name: String) -> Float {
        if name == "finalMix" { return finalMixValue }
        guard let index = DistortionPreset.parameterNames.firstIndex(of: name) else {
            engineProgrammerError("value(forParameter:)", self, "no parameter \(name) (a distortion has \(DistortionPreset.parameterNames.joined(separator: ", ")))")
        }
        let defaultValue = ParameterTable.distortion.parameterInfos(sampleRate: 48000, inputBusCount: 0, bandCount: 0)[index].defaultValue
        return Float(storedParameter(name, default: defaultValue))
    }

    override func applyBypass() {
        setStoredParameter("finalMix", bypass ? 0 : Double(finalMixValue), call: "bypass")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = DistortionNode(id: graphID, sampleRate: sampleRate)
        return declaring(outputFormat, on: node)
    }
}
