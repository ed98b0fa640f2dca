// The engine API's stereo panner (Web Audio's StereoPannerNode surface, a Linux addition).
import AudioGraphNodes
import Foundation

/// An equal-power stereo panner (Web Audio's `StereoPannerNode`; a Linux addition): mono or
/// stereo in, stereo out, by the spec's algorithm (Docs/Nodes.md, stereoPanner). Over the
/// graph's `stereoPanner` node (``StereoPannerNode``).
///
/// Thread safety: the engine's; `pan` may be set from any thread.
public final class AudioStereoPannerNode: AudioNode, @unchecked Sendable {
    /// A panner at the centre.
    public init() { super.init(kindName: "stereoPanner") }

    override var parameterTable: ParameterTable { .stereoPanner }

    /// The position, -1 (left) ... 1 (right), 0. Values outside are clamped, NaN ignored.
    public var pan: Float {
        get { Float(storedParameter("pan", default: 0)) }
        set { setStoredParameter("pan", Double(newValue), call: "pan") }
    }

    /// ``pan`` as a destination of ``AudioEngine/connect(_:to:fromBus:)`` (an auto-panner).
    public var panParameter: AudioNodeParameter { parameter("pan") }

    /// Stereo at the input's rate.
    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        AudioFormat(standardFormatWithSampleRate: (input ?? engineFormat).sampleRate, channels: 2) ?? engineFormat
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = StereoPannerNode(id: graphID, sampleRate: sampleRate)
        return declaring(outputFormat, on: node)
    }
}
