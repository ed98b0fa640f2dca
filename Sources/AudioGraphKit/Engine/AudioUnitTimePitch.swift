// The engine API's time-pitch unit (cf. AVAudioUnitTimePitch) over the graph's timePitch node.
import AudioGraphNodes
import Foundation

/// Changes playback rate and pitch independently (cf. AVAudioUnitTimePitch), the graph's
/// `timePitch` node (librubberband, real-time mode): `rate` 1/32...32 (1; 2 plays twice as
/// fast), `pitch` in cents -2400...2400 (0), `overlap` 3...32 (8; rubberband's analysis window,
/// taken when the engine builds its graph); values outside are clamped, as an Audio Unit's. The node pulls its input as fast as `rate` asks, so
/// its input must be a source that can be pulled ahead (a player, an oscillator, a mixer of them).
/// Bypass passes the input unchanged (1:1) while keeping the values you set. The output is time
/// aligned with the input (rubberband's start delay is discarded); ``latency`` says how far ahead
/// the unit reads.
///
/// Thread safety: the engine's; parameters may be set from any thread (applied at the next
/// slice, inside `performChanges` with its list).
public final class AudioUnitTimePitch: AudioUnitEffect, @unchecked Sendable {
    /// Makes a time-pitch unit to attach to an engine.
    public init() { super.init(kindName: "timePitch") }

    override var parameterTable: ParameterTable { .timePitch }

    /// Playback rate, 1/32...32 (1 = unchanged; 2 = twice as fast, half as long, same pitch).
    public var rate: Float {
        get { Float(storedParameter("rate", default: 1)) }
        set { set("rate", Double(newValue)) }
    }

    /// Pitch shift in cents, -2400...2400 (1200 = an octave up, same length).
    public var pitch: Float {
        get { Float(storedParameter("pitch", default: 0)) }
        set { set("pitch", Double(newValue)) }
    }

    /// Overlap of the analysis windows, 3...32 (8). Chooses rubberband's window when the engine
    /// builds the unit's graph node: below 6 short, else standard (rubberband's R3 engine, the
    /// one used, has no long window).
    public var overlap: Float {
        get { Float(storedParameter("overlap", default: 8)) }
        set { set("overlap", Double(newValue)) }
    }

    /// The stretch engine (a Linux addition; AVAudioUnitTimePitch has none): `.finer`,
    /// rubberband's R3 engine (the default), `.faster`, its R2 engine at about a quarter of
    /// the CPU, or `.fastest`, WSOLA at about 1/30, its output resampled by the pitch ratio (as
    /// SoX's `pitch` effect) when ``pitch`` is not 0, set before or while running
    /// (``TimePitchQuality``). Taken when the engine builds the unit's graph node: set it before
    /// the engine starts.
    public var quality: TimePitchQuality = .default

    /// How far ahead of its output the unit reads its input, in seconds (rubberband's start
    /// delay; the output itself is aligned). 0 until the engine has built the unit's node.
    public override var latency: TimeInterval {
        let current = engine.map { engine in engine.withLock { graphNode } } ?? graphNode
        guard let node = current as? TimePitchNode, let rate = node.outputFormats.first?.sampleRate, rate > 0 else { return 0 }
        return Double(node.latencyFrames) / rate
    }

    override func applyBypass() {
        setStoredParameter("bypass", bypass ? 1 : 0, call: "bypass")
    }

    /// Sets `address`, clamped to the timePitch table's range (NaN ignored).
    private func set(_ address: String, _ value: Double) {
        setStoredParameter(address, value, call: address)
    }

    /// A new node would start rubberband over: keep the node while running.
    override var canBeReplacedWhileRunning: Bool { false }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = TimePitchNode(id: graphID, sampleRate: sampleRate, quality: quality)
        return declaring(outputFormat, on: node)
    }
}
