// The engine's output (cf. AVAudioOutputNode): PulseAudio playback, or the manual rendering output.
import AudioGraphNodes
import AudioGraphPulse
import Foundation

/// The engine's output node (cf. AVAudioOutputNode): what reaches its input bus plays on the
/// PulseAudio sink, or, in manual rendering mode, is what the application pulls. Its output
/// format is the device's (the manual rendering format in manual mode).
///
/// Thread safety: the engine's; configure on a control thread.
public final class AudioOutputNode: AudioIONode, @unchecked Sendable {
    init() { super.init(kindName: "output") }

    public override var presentationLatency: TimeInterval { engine?.outputPresentationLatency ?? 0 }

    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        engineFormat
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        if engine?.manualMode != nil {
            return GenericOutputNode(id: graphID, clientFormat: PartialStreamFormat(channelCount: engineFormat.channelCount))
        }
        let node = OutputNode(id: graphID, properties: OutputProperties(device: device, latency: requestedLatency,
                                                                        streamName: "AudioGraph engine"))
        node.playbackObserver = engine?.voiceProcessingObserver
        return node
    }
}
