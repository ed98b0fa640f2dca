// The engine API's compressor (Web Audio's DynamicsCompressorNode; a Linux addition) over the graph's compressor node.
import AudioGraphNodes
import Foundation

/// A compressor with Web Audio's `DynamicsCompressorNode` model (a Linux addition: AVFoundation
/// has no such unit), the graph's `compressor` node: ``threshold`` -100...0 dB (-24), ``knee``
/// 0...40 dB (30), ``ratio`` 1...20 (12), ``attack`` 0...1 s (0.003), ``release`` 0...1 s
/// (0.25); values outside are clamped, as an Audio Unit's (NaN ignored). The output is the input
/// 6 ms later times the gain (look-ahead and makeup gain as Web Audio specifies; Docs/Nodes.md).
/// ``reduction`` reads the gain reduction in dB. Bypass sets the ratio to 1 while keeping the
/// value you set, and the release to 0 (so the gain returns to 1 at the next frame): the curve
/// is then the identity, the makeup gain 1, and the input passes exactly, 6 ms late, from the
/// next 128-frame quantum on.
///
/// Thread safety: the engine's; parameters may be set and ``reduction`` read from any thread.
public final class AudioUnitDynamicsCompressor: AudioUnitEffect, @unchecked Sendable {
    /// Makes a compressor to attach to an engine.
    public init() { super.init(kindName: "compressor") }

    override var parameterTable: ParameterTable { .compressor }

    private var ratioValue: Float = 12
    private var releaseValue: Float = 0.25

    /// Threshold in dB, -100...0.
    public var threshold: Float {
        get { Float(storedParameter("threshold", default: -24)) }
        set { setStoredParameter("threshold", Double(newValue), call: "threshold") }
    }

    /// Knee width in dB above the threshold, 0...40.
    public var knee: Float {
        get { Float(storedParameter("knee", default: 30)) }
        set { setStoredParameter("knee", Double(newValue), call: "knee") }
    }

    /// Ratio, 1...20 (dB of input change per dB of output change above the knee).
    public var ratio: Float {
        get { ratioValue }
        set {
            ratioValue = tableClamped("ratio", newValue, fallback: ratioValue)
            if !bypass { setStoredParameter("ratio", Double(newValue), call: "ratio") }
        }
    }

    /// Seconds to reduce the gain by 10 dB, 0...1.
    public var attack: Float {
        get { Float(storedParameter("attack", default: 0.003)) }
        set { setStoredParameter("attack", Double(newValue), call: "attack") }
    }

    /// Seconds to raise the gain by 10 dB, 0...1.
    public var release: Float {
        get { releaseValue }
        set {
            releaseValue = tableClamped("release", newValue, fallback: releaseValue)
            if !bypass { setStoredParameter("release", Double(newValue), call: "release") }
        }
    }

    /// The gain reduction in dB (≤ 0; 0 before the engine renders), Web Audio's `reduction`.
    public var reduction: Float {
        let current = engine.map { engine in engine.withLock { graphNode } } ?? graphNode
        return (current as? DynamicsCompressorNode)?.reduction ?? 0
    }

    /// The look-ahead, 6 ms.
    public override var latency: TimeInterval { DynamicsCompressorNode.lookAheadSeconds }

    override func applyBypass() {
        setStoredParameter("ratio", bypass ? 1 : Double(ratioValue), call: "bypass")
        setStoredParameter("release", bypass ? 0 : Double(releaseValue), call: "bypass")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = DynamicsCompressorNode(id: graphID, sampleRate: sampleRate)
        return declaring(outputFormat, on: node)
    }
}
