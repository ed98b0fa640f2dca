// The engine API's equalizer (cf. AVAudioUnitEQ) over the graph's eq node.
import AudioGraphNodes
import Foundation

/// A multi-band equalizer (cf. AVAudioUnitEQ): `bands` of ``AudioUnitEQFilterParameters`` in
/// series, then ``globalGain`` (dB, -96...24). Each band is one Audio EQ Cookbook section of the
/// graph's `eq` node. Bypass bypasses every band and the global gain: the bands glide out over
/// the eq's 10 ms (no click), then the input passes exactly.
///
/// Thread safety: the engine's; band and gain values may be set from any thread.
public final class AudioUnitEQ: AudioUnitEffect, @unchecked Sendable {
    /// The bands, in processing order.
    public private(set) var bands: [AudioUnitEQFilterParameters] = []

    /// An equalizer with `numberOfBands` bands (1...64), each bypassed until configured.
    public init(numberOfBands: Int = 1) {
        super.init(kindName: "eq")
        guard (1...EQProperties.maximumBandCount).contains(numberOfBands) else {
            engineProgrammerError("AudioUnitEQ(numberOfBands:)", nil,
                                  "\(numberOfBands) bands is outside 1...\(EQProperties.maximumBandCount)")
        }
        bands = (0..<numberOfBands).map { AudioUnitEQFilterParameters(unit: self, index: $0) }
        for b in bands {
            storedParameters["band.\(b.index).bypass"] = 1
            storedParameters["band.\(b.index).q"] = AudioUnitEQFilterParameters.q(bandwidth: 0.5)
            storedParameters["band.\(b.index).frequency"] = 1000
        }
    }

    override var parameterTable: ParameterTable { .eq }

    /// Whether band changes glide and bypass crossfades over 10 ms (true, as Apple's units do
    /// not click); false: Web Audio's un-smoothed changes, exact from the next frame (a Linux
    /// addition). Changing it makes a new graph node (the filters restart).
    public var smoothing: Bool = true {
        didSet {
            guard smoothing != oldValue else { return }
            needsNewGraphNode = true
            if graphNode != nil { engine?.applyEdit("smoothing") }
        }
    }

    private var globalGainValue: Float = 0

    /// Gain applied after the bands, dB (-96...24; clamped to the range).
    public var globalGain: Float {
        get { globalGainValue }
        set {
            globalGainValue = tableClamped("globalGain", newValue, fallback: globalGainValue)
            if !bypass { setStoredParameter("globalGain", Double(newValue), call: "globalGain") }
        }
    }

    /// Each band's own bypass, kept while the unit is bypassed.
    var bandBypassBeforeUnitBypass: [Double] = []

    override func applyBypass() {
        if bypass {
            bandBypassBeforeUnitBypass = bands.map { storedParameter("band.\($0.index).bypass", default: 1) }
            for b in bands { setStoredParameter("band.\(b.index).bypass", 1, call: "bypass") }
            setStoredParameter("globalGain", 0, call: "bypass")
        } else {
            for (b, v) in zip(bands, bandBypassBeforeUnitBypass) { setStoredParameter("band.\(b.index).bypass", v, call: "bypass") }
            setStoredParameter("globalGain", Double(globalGainValue), call: "bypass")
        }
    }

    /// Sets a band's value, clamped to the eq table's range (at the graph node's rate once it exists).
    func setBandParameter(_ index: Int, _ name: String, _ value: Double) {
        if bypass && name == "bypass" {
            if index < bandBypassBeforeUnitBypass.count { bandBypassBeforeUnitBypass[index] = value }
            return
        }
        setStoredParameter("band.\(index).\(name)", value, call: "bands[\(index)].\(name)")
    }

    /// A band's shape changed: the graph node's band types are fixed, so a new one is made.
    func bandTypeChanged() {
        needsNewGraphNode = true
        engine?.applyEdit("bands[].filterType")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let nyquist = sampleRate / 2
        let eqBands = bands.map { b in
            EQBand(type: b.filterType.bandType,
                   frequency: min(storedParameter("band.\(b.index).frequency", default: 1000), nyquist),
                   gain: storedParameter("band.\(b.index).gain", default: 0),
                   q: storedParameter("band.\(b.index).q", default: 0.70710678),
                   bypass: storedParameter("band.\(b.index).bypass", default: 1) != 0)
        }
        var properties = EQProperties(bands: eqBands)
        properties.smoothing = smoothing
        let node = EQNode(id: graphID, sampleRate: sampleRate, properties: properties)
        return declaring(outputFormat, on: node)
    }
}
