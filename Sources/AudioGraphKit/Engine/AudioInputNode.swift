// The engine's input (cf. AVAudioInputNode): audio captured from a PulseAudio source.
import AudioGraphNodes
import AudioGraphPulse
import Foundation

/// The engine's input node (cf. AVAudioInputNode): audio captured from PulseAudio's default
/// source (or the one set with `setDevice(_:)`). `inputFormat(forBus: 0)` is the device's
/// format; the output bus runs at the engine's rate with the device's channel count (PulseAudio
/// converts the rate), or the format given when it is connected.
///
/// The engine gives the node its PulseAudio connection by itself. It renders every slice
/// whether or not anything downstream reaches the output, so a tap on it works in an engine
/// with nothing connected to the output (the speech-recognition pattern). In manual rendering
/// mode it outputs silence.
///
/// Thread safety: the engine's.
public final class AudioInputNode: AudioIONode, AudioMixing, @unchecked Sendable {
    init() { super.init(kindName: "input") }

    /// The capture's overruns and underruns since start (silence was inserted or audio lost).
    public var captureFaultCount: Int {
        guard let s = (graphNode as? InputNode)?.captureStream else { return 0 }
        return s.overrunCount + s.underrunCount
    }

    override func defaultInputFormat(engineFormat: AudioFormat) -> AudioFormat {
        engine?.devices().input ?? engineFormat
    }

    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        let channels = engine?.devices().input.channelCount ?? engineFormat.channelCount
        return AudioFormat(standardFormatWithSampleRate: engineFormat.sampleRate, channels: channels) ?? engineFormat
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let channels = outputFormat?.channelCount ?? Int(engine?.devices().input.channelCount ?? 2)
        let node = InputNode(id: graphID, properties: InputProperties(device: device, channels: channels,
                                                                      latency: requestedLatency))
        node.declaredFormat = PartialStreamFormat(sampleRate: outputFormat?.sampleRate ?? sampleRate, channelCount: channels)
        node.pulseContext = engine?.pulseContext
        node.rendersSilenceWithoutContext = engine?.manualMode != nil
        return node
    }

    override var canBeReplacedWhileRunning: Bool { false }
}
