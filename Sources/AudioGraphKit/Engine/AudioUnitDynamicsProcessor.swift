// The engine API's dynamics processor (cf. AUDynamicsProcessor) over the graph's dynamicsProcessor node.
import AudioGraphNodes
import Foundation

/// A compressor/expander with AUDynamicsProcessor's parameters, the graph's `dynamicsProcessor`
/// node: ``threshold`` -40...20 dB (-20), ``headRoom`` 0.1...40 dB (5), ``expansionRatio``
/// 1...50 (2), ``expansionThreshold`` -120...0 dB (-100), ``attackTime`` 0.0001...0.2 s (0.001),
/// ``releaseTime`` 0.01...3 s (0.05), ``overallGain`` -40...40 dB (0), and the read-only
/// ``compressionAmount`` (dB). The curves are stated in Docs/Nodes.md (Apple does not publish
/// its own). Values outside are clamped (NaN ignored). Bypass sets the threshold to +20 dB, the
/// head room to 40 dB, the expansion ratio to 1 and the overall gain to 0 dB (keeping your
/// values): samples up to full scale pass exactly (once the gain has released to 0 dB).
///
/// Thread safety: the engine's; parameters may be set and ``compressionAmount`` read from any thread.
public final class AudioUnitDynamicsProcessor: AudioUnitEffect, @unchecked Sendable {
    /// Makes a dynamics processor to attach to an engine.
    public init() { super.init(kindName: "dynamicsProcessor") }

    override var parameterTable: ParameterTable { .dynamicsProcessor }

    private var kept: [String: Float] = ["threshold": -20, "headRoom": 5, "expansionRatio": 2, "overallGain": 0]

    private func bypassable(_ name: String, _ value: Float) {
        kept[name] = tableClamped(name, value, fallback: kept[name]!)
        if !bypass { setStoredParameter(name, Double(value), call: name) }
    }

    /// Compression threshold in dB, -40...20.
    public var threshold: Float {
        get { kept["threshold"]! }
        set { bypassable("threshold", newValue) }
    }

    /// How far above the threshold the output may rise, dB, 0.1...40.
    public var headRoom: Float {
        get { kept["headRoom"]! }
        set { bypassable("headRoom", newValue) }
    }

    /// Downward expansion ratio below ``expansionThreshold``, 1...50.
    public var expansionRatio: Float {
        get { kept["expansionRatio"]! }
        set { bypassable("expansionRatio", newValue) }
    }

    /// Expansion threshold in dB, -120...0.
    public var expansionThreshold: Float {
        get { Float(storedParameter("expansionThreshold", default: -100)) }
        set { setStoredParameter("expansionThreshold", Double(newValue), call: "expansionThreshold") }
    }

    /// Attack time constant in seconds, 0.0001...0.2.
    public var attackTime: Float {
        get { Float(storedParameter("attackTime", default: 0.001)) }
        set { setStoredParameter("attackTime", Double(newValue), call: "attackTime") }
    }

    /// Release time constant in seconds, 0.01...3.
    public var releaseTime: Float {
        get { Float(storedParameter("releaseTime", default: 0.05)) }
        set { setStoredParameter("releaseTime", Double(newValue), call: "releaseTime") }
    }

    /// Gain after processing in dB, -40...40 (AUDynamicsProcessor's overall/master gain).
    public var overallGain: Float {
        get { kept["overallGain"]! }
        set { bypassable("overallGain", newValue) }
    }

    /// The gain the unit applies before ``overallGain``, dB (negative while compressing or
    /// expanding); 0 before the engine renders.
    public var compressionAmount: Float {
        let current = engine.map { engine in engine.withLock { graphNode } } ?? graphNode
        return (current as? DynamicsProcessorNode)?.compressionAmount ?? 0
    }

    override func applyBypass() {
        setStoredParameter("threshold", bypass ? 20 : Double(kept["threshold"]!), call: "bypass")
        setStoredParameter("headRoom", bypass ? 40 : Double(kept["headRoom"]!), call: "bypass")
        setStoredParameter("expansionRatio", bypass ? 1 : Double(kept["expansionRatio"]!), call: "bypass")
        setStoredParameter("overallGain", bypass ? 0 : Double(kept["overallGain"]!), call: "bypass")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = DynamicsProcessorNode(id: graphID, sampleRate: sampleRate)
        return declaring(outputFormat, on: node)
    }
}
