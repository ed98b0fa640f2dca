// The engine API's matrix mixer (cf. AUMatrixMixer, kAudioUnitSubType_MatrixMixer), a Linux addition over the graph's matrixMixer node.
import AudioGraphNodes
import Foundation

/// A matrix mixer with AUMatrixMixer's four volumes (a Linux addition: AVFAudio has no class for
/// `kAudioUnitSubType_MatrixMixer`), over the graph's `matrixMixer` node (``MatrixMixerNode``):
/// input buses and output buses of fixed channel counts, channels numbered sequentially across
/// the buses; output channel `o` is
/// `volume · outputVolume(o) · Σ_i crosspoint(i, o) · inputVolume(i) · x_i`.
///
/// AU's addressing of `kMatrixMixerParam_Volume` maps to: crosspoint (global scope, element
/// `i << 16 | o`) → ``setGain(_:crosspointFromInput:toOutput:)``; input scope, element `i` →
/// ``setVolume(_:inputChannel:)``; output scope, element `o` → ``setVolume(_:outputChannel:)``;
/// global element `0xFFFFFFFF` → ``masterVolume``. Crosspoints start at 0 (nothing routed),
/// volumes at 1; values are clamped to -16...16 (crosspoints) and 0...16 (volumes), NaN ignored.
/// Every gain is a parameter: automate it or connect audio to it through ``crosspointParameter(input:output:)``
/// and the others (graph addresses `crosspoint.I.O`, `inputChannel.I.volume`,
/// `outputChannel.O.volume`, `volume`).
///
/// Connect each input bus from a node with its channel count (another count is an edit the
/// engine refuses: ``AudioEngine/editFaultCount``).
///
/// Thread safety: the engine's; gains may be set from any thread.
public final class AudioUnitMatrixMixer: AudioUnit, @unchecked Sendable {
    /// Channels of each input bus.
    public let inputBusChannels: [Int]
    /// Channels of each output bus.
    public let outputBusChannels: [Int]
    /// Input channels in all (the matrix's rows; AU's `kAudioUnitProperty_MatrixDimensions`).
    public var inputChannelCount: Int { inputBusChannels.reduce(0, +) }
    /// Output channels in all (the matrix's columns).
    public var outputChannelCount: Int { outputBusChannels.reduce(0, +) }

    /// A mixer with input buses of `inputs` channels each and output buses of `outputs` channels
    /// each (1...32 buses, 1...64 channels per side; out of range is a programmer error).
    public init(inputs: [Int] = [2], outputs: [Int] = [2]) {
        if let problem = MatrixMixerNode.problem(.init(inputs: inputs, outputs: outputs)) {
            preconditionFailure("AudioUnitMatrixMixer: \(problem.key): \(problem.text)")
        }
        inputBusChannels = inputs
        outputBusChannels = outputs
        super.init(kindName: "matrixMixer")
    }

    public override var numberOfInputs: Int { inputBusChannels.count }
    public override var numberOfOutputs: Int { outputBusChannels.count }

    /// Output bus `bus` has its channel count at the inputs' (or the engine's) rate.
    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        AudioFormat(standardFormatWithSampleRate: (input ?? engineFormat).sampleRate,
                    channels: AudioChannelCount(outputBusChannels[min(bus, outputBusChannels.count - 1)])) ?? engineFormat
    }

    /// Unconnected input bus `bus` has its own channel count.
    override func defaultInputFormat(bus: Int, engineFormat: AudioFormat) -> AudioFormat {
        AudioFormat(standardFormatWithSampleRate: engineFormat.sampleRate,
                    channels: AudioChannelCount(inputBusChannels[min(bus, inputBusChannels.count - 1)])) ?? engineFormat
    }

    // MARK: Gains

    /// The gain from input channel `input` to output channel `output` (0 when never set).
    public func gain(crosspointFromInput input: Int, toOutput output: Int) -> Float {
        checkChannels(input: input, output: output, "gain(crosspointFromInput:toOutput:)")
        return Float(storedParameter(MatrixMixerNode.crosspointAddress(input: input, output: output).description, default: 0))
    }

    /// Sets the gain from input channel `input` to output channel `output` (-16...16).
    public func setGain(_ gain: Float, crosspointFromInput input: Int, toOutput output: Int) {
        checkChannels(input: input, output: output, "setGain(_:crosspointFromInput:toOutput:)")
        set(MatrixMixerNode.crosspointAddress(input: input, output: output), gain, minimum: -16, call: "setGain(_:crosspointFromInput:toOutput:)")
    }

    /// The volume of input channel `channel` (1 when never set).
    public func volume(inputChannel channel: Int) -> Float {
        checkChannels(input: channel, output: 0, "volume(inputChannel:)")
        return Float(storedParameter(MatrixMixerNode.inputVolumeAddress(channel).description, default: 1))
    }

    /// Sets the volume of input channel `channel` (0...16).
    public func setVolume(_ volume: Float, inputChannel channel: Int) {
        checkChannels(input: channel, output: 0, "setVolume(_:inputChannel:)")
        set(MatrixMixerNode.inputVolumeAddress(channel), volume, minimum: 0, call: "setVolume(_:inputChannel:)")
    }

    /// The volume of output channel `channel` (1 when never set).
    public func volume(outputChannel channel: Int) -> Float {
        checkChannels(input: 0, output: channel, "volume(outputChannel:)")
        return Float(storedParameter(MatrixMixerNode.outputVolumeAddress(channel).description, default: 1))
    }

    /// Sets the volume of output channel `channel` (0...16).
    public func setVolume(_ volume: Float, outputChannel channel: Int) {
        checkChannels(input: 0, output: channel, "setVolume(_:outputChannel:)")
        set(MatrixMixerNode.outputVolumeAddress(channel), volume, minimum: 0, call: "setVolume(_:outputChannel:)")
    }

    /// The master volume (0...16; 1).
    public var masterVolume: Float {
        get { Float(storedParameter("volume", default: 1)) }
        set { set(MatrixMixerNode.masterVolumeAddress, newValue, minimum: 0, call: "masterVolume") }
    }

    /// A crosspoint as a destination of ``AudioEngine/connect(_:to:fromBus:)`` (or automation by address).
    public func crosspointParameter(input: Int, output: Int) -> AudioNodeParameter {
        checkChannels(input: input, output: output, "crosspointParameter(input:output:)")
        return parameter(MatrixMixerNode.crosspointAddress(input: input, output: output).description)
    }

    /// The master volume as a destination of ``AudioEngine/connect(_:to:fromBus:)``.
    public var masterVolumeParameter: AudioNodeParameter { parameter("volume") }

    private func set(_ address: ParameterAddress, _ value: Float, minimum: Float, call: String) {
        guard !value.isNaN else { return }
        setStoredParameter(address.description, Double(min(max(value, minimum), 16)), call: call)
    }

    private func checkChannels(input: Int, output: Int, _ call: String) {
        guard (0..<inputChannelCount).contains(input), (0..<outputChannelCount).contains(output) else {
            engineProgrammerError(call, self, "channel \(input) → \(output) does not exist (the matrix is \(inputChannelCount) × \(outputChannelCount))")
        }
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        try MatrixMixerNode(id: graphID, sampleRate: sampleRate, options: .init(inputs: inputBusChannels, outputs: outputBusChannels))
    }
}
