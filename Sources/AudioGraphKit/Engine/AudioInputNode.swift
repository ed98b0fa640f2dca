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
/// mode it outputs silence, or what the block of ``setManualRenderingInputPCMFormat(_:inputBlock:)``
/// supplies.
///
/// Thread safety: the engine's.
public final class AudioInputNode: AudioIONode, AudioMixing, @unchecked Sendable {
    init() { super.init(kindName: "input") }

    public override var presentationLatency: TimeInterval { engine?.inputPresentationLatency ?? 0 }

    /// The capture's overruns, underruns and drift-control drops since start (silence was
    /// inserted or audio lost: each is a hole in what the graph got).
    public var captureFaultCount: Int {
        (graphNode as? InputNode)?.captureStream?.lossCount ?? 0
    }

    /// The application's taps' lost buffers plus the capture's holes (``captureFaultCount``)
    /// for each of them: a hole before the graph is a loss the tap sees too, never silent.
    public override func droppedTapBufferCount(onBus bus: AudioNodeBus) -> Int {
        let taps = engine?.withLock { self.taps.values.filter { $0.bus == bus && !$0.isInternal }.count } ?? 0
        return super.droppedTapBufferCount(onBus: bus) + (taps > 0 ? captureFaultCount : 0)
    }

    override func defaultInputFormat(bus: Int, engineFormat: AudioFormat) -> AudioFormat {
        engine?.devices().input ?? engineFormat
    }

    /// The source channels the output bus carries, in order (a Linux addition, as The Amazing
    /// Audio Engine receives "one particular channel or a channel group"): `[1]` is the second
    /// channel alone, `[1, 0]` the first two swapped; nil, every channel in order. Set it while
    /// the engine is stopped; the output bus then has that many channels.
    public var channelMap: [Int]? {
        didSet {
            if let engine, engine.isRunning {
                engineProgrammerError("channelMap", self, "stop the engine before changing the channel map")
            }
            if let map = channelMap, map.isEmpty || map.contains(where: { $0 < 0 || $0 >= 32 }) {
                engineProgrammerError("channelMap", self, "\(map) needs 1 to 32 source channels, each 0...31")
            }
            engine?.discardPreparedGraph()
        }
    }

    /// How many channels the source is opened with: the device's, or enough for the map.
    private var sourceChannels: Int {
        let device = Int(engine?.devices().input.channelCount ?? 2)
        guard let map = channelMap else { return device }
        return max(device, (map.max() ?? 0) + 1)
    }

    // MARK: Manual rendering input

    /// The format and block of ``setManualRenderingInputPCMFormat(_:inputBlock:)``.
    private var manualInput: (format: AudioFormat, block: AudioIONodeInputBlock)?

    /// Supplies the input in manual rendering mode, as AVAudioInputNode's method of that name:
    /// the engine calls `block` once per slice, on the thread that renders, for the slice's
    /// frames in `format` (any PCM sample type, interleaved or not); the input's output bus
    /// then has `format`'s channel count. Without it the input is silent in manual rendering.
    ///
    /// Returns false (nothing changes) unless the engine is in manual rendering mode and
    /// stopped, and `format` is PCM at the manual rendering rate (the engine does not convert
    /// the block's rate: a Linux restriction, stated here).
    @discardableResult
    public func setManualRenderingInputPCMFormat(_ format: AudioFormat, inputBlock block: @escaping AudioIONodeInputBlock) -> Bool {
        guard let engine, engine.isInManualRenderingMode, !engine.isRunning,
              format.commonFormat != .otherFormat, format.channelCount > 0,
              format.sampleRate == engine.manualRenderingFormat.sampleRate else { return false }
        manualInput = (format, block)
        engine.discardPreparedGraph()
        return true
    }

    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        if let manualInput, engine?.isInManualRenderingMode == true {
            return AudioFormat(standardFormatWithSampleRate: engineFormat.sampleRate, channels: manualInput.format.channelCount) ?? engineFormat
        }
        let channels = AudioChannelCount(channelMap?.count ?? sourceChannels)
        return AudioFormat(standardFormatWithSampleRate: engineFormat.sampleRate, channels: channels) ?? engineFormat
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        if let manualInput, engine?.manualMode != nil {
            return SourceBlockGraphNode(id: graphID, format: manualInput.format, block: .input(manualInput.block))
        }
        let properties: InputProperties
        if let map = channelMap {
            properties = InputProperties(device: device, channels: sourceChannels, latency: requestedLatency, channelMap: map)
        } else {
            properties = InputProperties(device: device, channels: outputFormat?.channelCount ?? sourceChannels,
                                         latency: requestedLatency)
        }
        let channels = properties.outputChannelCount
        let node = InputNode(id: graphID, properties: properties)
        node.declaredFormat = PartialStreamFormat(sampleRate: outputFormat?.sampleRate ?? sampleRate, channelCount: channels)
        node.pulseContext = engine?.pulseContext
        node.rendersSilenceWithoutContext = engine?.manualMode != nil
        node.captureProcessor = try engine?.voiceProcessorForInput(sampleRate: outputFormat?.sampleRate ?? sampleRate,
                                                                   channelCount: channels, graphID: graphID)
        return node
    }

    override var canBeReplacedWhileRunning: Bool { false }
}
