// The engine API's delay (cf. AVAudioUnitDelay) over the graph's delay node.
import AudioGraphNodes
import Foundation

/// A delay with feedback and a low-pass in the loop (cf. AVAudioUnitDelay), the graph's
/// `delay` node: `delayTime` 0...2 s (1), `feedback` -100...100 % (50), `lowPassCutoff`
/// 10 Hz...rate/2 (15000), `wetDryMix` 0...100 % (100); values outside are clamped to the delay
/// table's ranges, as an Audio Unit's (NaN is ignored). Bypass sets the mix to dry (the input
/// passes exactly) while keeping the value you set.
///
/// Thread safety: the engine's; parameters may be set from any thread (applied at the next
/// slice, inside `performChanges` with its list).
public final class AudioUnitDelay: AudioUnitEffect, @unchecked Sendable {
    /// Makes a delay to attach to an engine.
    public init() { super.init(kindName: "delay") }

    override var parameterTable: ParameterTable { .delay }

    private var wetDryValue: Float = 100

    /// Whether `delayTime` changes crossfade and `lowPassCutoff` glides over 10 ms (true);
    /// false: Web Audio's un-smoothed changes (a Linux addition). Changing it makes a new graph
    /// node (the delay line restarts).
    public var smoothing: Bool = true {
        didSet {
            guard smoothing != oldValue else { return }
            needsNewGraphNode = true
            if graphNode != nil { engine?.applyEdit("smoothing") }
        }
    }

    /// Delay time in seconds, 0...2.
    public var delayTime: TimeInterval {
        get { storedParameter("delayTime", default: 1) }
        set { setStoredParameter("delayTime", newValue, call: "delayTime") }
    }

    /// Feedback in percent, -100...100.
    public var feedback: Float {
        get { Float(storedParameter("feedback", default: 50)) }
        set { setStoredParameter("feedback", Double(newValue), call: "feedback") }
    }

    /// Cutoff of the low-pass in the feedback loop, Hz (10...half the rate).
    public var lowPassCutoff: Float {
        get { Float(storedParameter("lowPassCutoff", default: 15000)) }
        set { setStoredParameter("lowPassCutoff", Double(newValue), call: "lowPassCutoff") }
    }

    /// Wet share in percent, 0...100.
    public var wetDryMix: Float {
        get { wetDryValue }
        set {
            wetDryValue = tableClamped("wetDryMix", newValue, fallback: wetDryValue)
            if !bypass { setStoredParameter("wetDryMix", Double(newValue), call: "wetDryMix") }
        }
    }

    override func applyBypass() {
        setStoredParameter("wetDryMix", bypass ? 0 : Double(wetDryValue), call: "bypass")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = DelayNode(id: graphID, sampleRate: sampleRate, options: .init(smoothing: smoothing))
        return declaring(outputFormat, on: node)
    }
}
