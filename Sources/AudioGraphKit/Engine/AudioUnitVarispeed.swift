// The engine API's varispeed (cf. AVAudioUnitVarispeed) over the graph's varispeed node.
import AudioGraphNodes
import Foundation

/// A varispeed (cf. AVAudioUnitVarispeed), the graph's `varispeed` node: plays its input at
/// ``rate`` 0.25...4 (1), pitch following, by windowed-sinc resampling
/// (``VariableRateResampler``). ``AudioUnitEffect/bypass`` plays at rate 1 (the node's `bypass`
/// parameter).
///
/// Thread safety: the engine's; `rate` may be set from any thread (applied at the next slice,
/// inside `performChanges` with its list, at its first frame).
public final class AudioUnitVarispeed: AudioUnitEffect, @unchecked Sendable {
    /// Makes a varispeed to attach to an engine.
    public init() { super.init(kindName: "varispeed") }

    override var parameterTable: ParameterTable { .varispeed }

    /// The playback rate, 0.25...4 (1): 2 plays twice as fast, an octave up. A value outside
    /// is clamped to the range, NaN ignored.
    public var rate: Float {
        get { Float(storedParameter("rate", default: 1)) }
        set { setStoredParameter("rate", Double(newValue), call: "rate") }
    }

    /// How far ahead of its output position the unit reads its input, in seconds of input at
    /// the current rate (its kernel's reach; the output itself is time-aligned, not delayed).
    public override var latency: TimeInterval {
        let r = bypass ? 1 : Double(rate)
        guard let sampleRate = graphNode?.processingRate, sampleRate > 0 else { return 0 }
        return Double(VariableRateResampler.lookahead(rate: r)) / sampleRate
    }

    override func applyBypass() {
        setStoredParameter("bypass", bypass ? 1 : 0, call: "bypass")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = VarispeedNode(id: graphID, sampleRate: sampleRate)
        return declaring(outputFormat, on: node)
    }
}
