// The engine API's peak limiter (cf. AUPeakLimiter) over the graph's limiter node.
import AudioGraphNodes
import Foundation

/// A look-ahead peak limiter with AUPeakLimiter's parameters, the graph's `limiter` node:
/// ``attackTime`` 0.001...0.03 s (0.012; also the look-ahead, fixed when the engine builds the
/// node), ``decayTime`` 0.001...0.06 s (0.024), ``preGain`` -40...40 dB (0), and ``ceiling``
/// -40...0 dB (0; a Linux addition). No output sample exceeds the ceiling. Values outside are
/// clamped (NaN ignored). Bypass sets the pre-gain to 0 dB (keeping your value): signals below
/// the ceiling then pass exactly, delayed by the look-ahead; peaks above it are still limited.
///
/// Thread safety: the engine's; parameters may be set from any thread.
public final class AudioUnitPeakLimiter: AudioUnitEffect, @unchecked Sendable {
    /// Makes a limiter to attach to an engine.
    public init() { super.init(kindName: "limiter") }

    override var parameterTable: ParameterTable { .peakLimiter }

    private var preGainValue: Float = 0

    /// Attack (and look-ahead) in seconds, 0.001...0.03.
    public var attackTime: Float {
        get { Float(storedParameter("attackTime", default: 0.012)) }
        set { setStoredParameter("attackTime", Double(newValue), call: "attackTime") }
    }

    /// Release time constant in seconds, 0.001...0.06.
    public var decayTime: Float {
        get { Float(storedParameter("decayTime", default: 0.024)) }
        set { setStoredParameter("decayTime", Double(newValue), call: "decayTime") }
    }

    /// Gain before limiting in dB, -40...40.
    public var preGain: Float {
        get { preGainValue }
        set {
            preGainValue = tableClamped("preGain", newValue, fallback: preGainValue)
            if !bypass { setStoredParameter("preGain", Double(newValue), call: "preGain") }
        }
    }

    /// The largest output magnitude in dBFS, -40...0.
    public var ceiling: Float {
        get { Float(storedParameter("ceiling", default: 0)) }
        set { setStoredParameter("ceiling", Double(newValue), call: "ceiling") }
    }

    /// The look-ahead in seconds (the attack time).
    public override var latency: TimeInterval { Double(attackTime) }

    override func applyBypass() {
        setStoredParameter("preGain", bypass ? 0 : Double(preGainValue), call: "bypass")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = PeakLimiterNode(id: graphID, sampleRate: sampleRate)
        return declaring(outputFormat, on: node)
    }
}
