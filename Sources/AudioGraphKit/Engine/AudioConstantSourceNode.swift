// The engine API's constant source (Web Audio's ConstantSourceNode surface, a Linux addition).
import AudioGraphNodes
import Foundation

/// A source whose every sample is ``offset`` (Web Audio's `ConstantSourceNode`; a Linux
/// addition), in the engine's format (each channel the same). Over the graph's
/// `constantSource` node (``ConstantSourceNode``).
///
/// Thread safety: the engine's; `offset` may be set from any thread.
public final class AudioConstantSourceNode: AudioNode, @unchecked Sendable {
    /// A source of 1.
    public init() { super.init(kindName: "constantSource") }

    public override var numberOfInputs: Int { 0 }

    override var parameterTable: ParameterTable { .constantSource }

    /// The value of every sample (Web Audio's range: the finite single floats; 1). NaN is ignored.
    public var offset: Float {
        get { Float(storedParameter("offset", default: 1)) }
        set { setStoredParameter("offset", Double(newValue), call: "offset") }
    }

    /// ``offset`` as a destination of ``AudioEngine/connect(_:to:fromBus:)``.
    public var offsetParameter: AudioNodeParameter { parameter("offset") }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let f = outputFormat ?? engineFormat
        return ConstantSourceNode(id: graphID, sampleRate: f.sampleRate, options: .init(channels: f.channelCount))
    }
}
