// The engine API's LV2 plugin unit (cf. an AVAudioUnit loaded from a component) over the graph's lv2 node.
import AudioGraphNodes
import AudioGraphPlugins
import Foundation

/// An LV2 plugin as an engine unit (cf. `AVAudioUnit.instantiate(with:)`; on Linux a plugin is
/// named by its URI). Audio input ports are the channels of input bus 0, audio output ports
/// those of output bus 0; a plugin with one audio input and one output runs one instance per
/// channel. Control input ports are ``parameters`` (set with ``setValue(_:forParameter:)``,
/// read with ``value(forParameter:)``; applied at the next slice, inside `performChanges` with
/// its list). `bypass` passes the input unchanged. ``latency`` is what the plugin reports.
///
/// Thread safety: the engine's; parameters and `bypass` may be set from any thread.
public final class AudioUnitLV2: AudioUnitEffect, MIDIInstrumentUnit, SequenceDestination, @unchecked Sendable {
    /// The plugin's description (ports, features).
    package let plugin: LV2PluginInfo
    /// The control input ports, by port index (cf. `auAudioUnit.parameterTree.allParameters`).
    public let parameters: [AudioUnitParameter]
    private let infos: [String: ParameterInfo]

    /// Loads the description of the plugin with `uri` from the installed plugins.
    /// - Throws: ``LV2Error/libraryMissing(reason:)`` when liblilv cannot be loaded,
    ///   ``LV2Error/pluginNotFound(uri:)`` for an unknown URI,
    ///   ``LV2Error/missingFeature(uri:feature:)`` when it needs a feature the host lacks,
    ///   ``LV2Error/unsupportedPort(uri:symbol:kind:)``, ``LV2Error/noAudioOutput(uri:)``.
    public init(uri: String) throws(LV2Error) {
        let info = try LV2World.shared().plugin(uri: uri)
        try info.checkHostable()
        guard !info.audioOutputs.isEmpty else { throw .noAudioOutput(uri: uri) }
        plugin = info
        parameters = info.controlInputs.map { port in
            let range = port.controlRange
            return AudioUnitParameter(identifier: port.symbol, displayName: port.name, minValue: Float(range.lowerBound),
                                      maxValue: Float(range.upperBound), defaultValue: Float(port.startValue), portIndex: port.index)
        }
        infos = Dictionary(uniqueKeysWithValues: LV2Node.parameterInfos(info).map { ($0.address.name, $0) })
        super.init(kindName: "lv2")
    }

    /// The sequence tracks playing into the plugin (re-attached to every graph node made for it).
    var sequenceTracks: [MIDITrackSchedule] = []

    /// Sends one MIDI message to the plugin's MIDI input (dropped when it has none; see ``MIDIInstrumentUnit``).
    public func send(_ event: MIDIEvent, at time: AudioTime?) {
        sendMIDI(event, at: time)
    }

    override func didMakeGraphNode(_ node: GraphNode) {
        super.didMakeGraphNode(node)
        handSequenceTracks(to: node)
    }

    /// The plugin's name.
    public override var name: String { plugin.name }
    /// The plugin's URI's authority stands in for a manufacturer (LV2 data has no such field everywhere).
    public override var manufacturerName: String { URL(string: plugin.uri)?.host ?? plugin.uri }

    /// The current value of the control port `symbol` (its default until set).
    /// - Throws: ``AudioGraphError/parameterNotFound(node:address:)`` for an unknown symbol.
    public func value(forParameter symbol: String) throws(AudioGraphError) -> Float {
        guard let info = infos[symbol], symbol != LV2Node.bypassName || parameters.contains(where: { $0.identifier == symbol }) else {
            throw .parameterNotFound(node: graphID, address: symbol)
        }
        return Float(storedParameter(symbol, default: info.defaultValue))
    }

    /// Sets the control port `symbol` (cf. `AUParameter.value`): a value outside the plugin's
    /// range is clamped to it, as an Audio Unit's parameter; NaN is ignored.
    /// - Throws: ``AudioGraphError/parameterNotFound(node:address:)`` for an unknown symbol.
    public func setValue(_ value: Float, forParameter symbol: String) throws(AudioGraphError) {
        guard let info = infos[symbol], symbol != LV2Node.bypassName || parameters.contains(where: { $0.identifier == symbol }) else {
            throw .parameterNotFound(node: graphID, address: symbol)
        }
        guard !value.isNaN else { return }
        setStoredParameter(symbol, info.clamped(Double(value)), call: "setValue(_:forParameter:)")
    }

    /// The plugin's latency as it reports it (`lv2:reportsLatency`), in seconds at the node's
    /// rate; 0 before the engine has made the node, or for a plugin that reports none.
    public override var latency: TimeInterval {
        guard let node = graphNode as? LV2Node else { return 0 }
        return Double(node.latencyFrames) / node.processingRate
    }

    /// A plugin with several audio ports outputs as many channels as it has audio outputs;
    /// one that runs per channel keeps its input's format.
    override func defaultOutputFormat(bus: Int, engineFormat: AudioFormat, input: AudioFormat?) -> AudioFormat {
        let base = input ?? engineFormat
        if plugin.runsPerChannel { return base }
        return AudioFormat(standardFormatWithSampleRate: base.sampleRate, channels: AudioChannelCount(plugin.audioOutputs.count)) ?? base
    }

    override func applyBypass() {
        setStoredParameter(LV2Node.bypassName, bypass ? 1 : 0, call: "bypass")
    }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node: LV2Node
        do throws(LV2Error) { node = try LV2Node(id: graphID, plugin: plugin) } catch {
            throw .nodeSetupFailed(node: graphID, reason: error.description)
        }
        return declaring(outputFormat, on: node)
    }
}
