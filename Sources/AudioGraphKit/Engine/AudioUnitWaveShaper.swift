// The engine API's waveshaper (Web Audio's WaveShaperNode; a Linux addition) over the graph's waveShaper node.
import AudioGraphNodes
import Foundation

/// A waveshaper (a Linux addition, Web Audio's `WaveShaperNode`), the graph's `waveShaper`
/// node: each sample becomes ``curve`` at it (Web Audio's indexing; nil passes the input),
/// optionally ``oversample``d 2x or 4x (then 32 frames late; Docs/Nodes.md). Both may change
/// while the engine runs. Bypass passes the input unchanged (no curve) while keeping yours.
///
/// Thread safety: the engine's; set the properties from any thread.
public final class AudioUnitWaveShaper: AudioUnitEffect, @unchecked Sendable {
    /// Makes a waveshaper to attach to an engine.
    public init() { super.init(kindName: "waveShaper") }

    private var curveValue: [Float]?
    private var oversampleValue: WaveShaperOversample = .none

    /// The shaping curve (2 or more finite values), or nil for none.
    public var curve: [Float]? {
        get { curveValue }
        set {
            if let c = newValue, c.count < 2 || !c.allSatisfy(\.isFinite) { return }
            curveValue = newValue
            if !bypass { propertyChanged("curve", newValue ?? [Float]()) }
        }
    }

    /// The oversampling.
    public var oversample: WaveShaperOversample {
        get { oversampleValue }
        set {
            oversampleValue = newValue
            propertyChanged("oversample", newValue)
        }
    }

    override func applyBypass() {
        propertyChanged("curve", bypass ? [Float]() : (curveValue ?? []))
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = try WaveShaperNode(id: graphID, properties: WaveShaperProperties(curve: bypass ? nil : curveValue, oversample: oversampleValue))
        return declaring(outputFormat, on: node)
    }
}
