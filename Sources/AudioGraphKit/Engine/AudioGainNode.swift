// The engine API's gain (Web Audio's GainNode surface, a Linux addition) over the graph's gain node.
import AudioGraphNodes
import Foundation

/// A gain stage (Web Audio's `GainNode`; a Linux addition: AVFAudio has none): every sample of
/// every channel times ``gain``. Over the graph's `gain` node (``GainNode``): a-rate, exact in
/// single precision, and graph files may automate it.
///
/// Thread safety: the engine's; `gain` may be set from any thread (applied at the next slice,
/// inside `performChanges` with its list).
public final class AudioGainNode: AudioNode, @unchecked Sendable {
    /// A gain of 1.
    public init() { super.init(kindName: "gain") }

    override var parameterTable: ParameterTable { .gain }

    /// The linear gain (Web Audio's range: the finite single floats; 1). NaN is ignored.
    public var gain: Float {
        get { Float(storedParameter("gain", default: 1)) }
        set { setStoredParameter("gain", Double(newValue), call: "gain") }
    }

    /// ``gain`` as a destination of ``AudioEngine/connect(_:to:fromBus:)`` (audio into the parameter: AM, tremolo).
    public var gainParameter: AudioNodeParameter { parameter("gain") }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = GainNode(id: graphID, sampleRate: sampleRate)
        return declaring(outputFormat, on: node)
    }
}
