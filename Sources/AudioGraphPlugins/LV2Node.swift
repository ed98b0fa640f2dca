// A graph node hosting an LV2 plugin: audio ports as bus channels, control inputs as parameters.
import AudioGraphCore
import AudioGraphRealtime
import Glibc
import Synchronization

/// A node that runs an LV2 plugin (the graph file's `lv2` node).
///
/// Buses: one input bus whose channels are the plugin's audio inputs (a plugin without audio
/// inputs, a generator, ignores what is connected there), one output bus whose channels are its audio outputs. A plugin with exactly one
/// audio input and one audio output runs one instance per channel, so it fits a bus of any width.
/// Parameters: one per control input port, named by the port's symbol, with the plugin's range
/// and default; plus `bypass` (0/1: the input passes to the output unchanged and the plugin is
/// not run) unless the plugin has a control of that symbol itself. CV inputs read silence; atom
/// inputs that support `midi:MidiEvent` (an instrument's MIDI input) carry the events sent to
/// ``midiInput`` and the sequences attached to the node (``MIDIEventReceiver``), each stamped
/// with its frame in the run (sample-exact); other atom inputs read an empty sequence and atom
/// outputs are dropped (``LV2AtomBuffers``); event
/// ports and ports of unknown kinds are refused unless optional
/// (``LV2Error/unsupportedPort(uri:symbol:kind:)``). The plugin gets the features of
/// ``LV2InstanceFeatures`` (URID map/unmap, options, bounded block length 1...maximum frames
/// per slice). A plugin that does not declare `lv2:hardRTCapable` still runs, with a one-line
/// warning on stderr when the node is first made (``hardRTWarning(id:plugin:)``; once per node id and plugin in a process).
///
/// Instances are made, connected and activated at initialize (``makeKernel(maximumFramesPerSlice:)``),
/// on the control thread; the render thread only runs them. Parameter steps change the plugin's
/// controls sample-exactly: a slice whose values change mid-way is run in pieces at the frames
/// where they change. While a parameter ramps (changes at every frame) the plugin runs in
/// sub-blocks of ``LV2Kernel/rampBlock`` (16) frames, each with the values of its first frame.
/// Integer controls get rounded values and toggled ones 0 or 1 (at 0.5), ramps included.
///
/// Stop and start: the instances keep their state (a plugin reverb's tail or a delay's buffer
/// plays on after `start()`, unlike the built-in reverb, which clears its tail): LV2's
/// `deactivate`/`activate` reset may not run on the render thread, where a node's start runs.
/// `uninitialize()` + `initialize()` makes fresh instances.
///
/// Thread safety: configure on a control thread; parameters may be set from any thread;
/// ``latencyFrames`` may be read from any thread.
public final class LV2Node: GraphNode, MIDIEventReceiver, @unchecked Sendable {
    /// The hosted plugin.
    package let plugin: LV2PluginInfo
    /// The node's MIDI input (events from any control thread; read when the plugin has a MIDI atom input).
    public let midiInput = MIDIInputPort()
    /// Whether the plugin takes MIDI (an atom input supporting `midi:MidiEvent`).
    public var takesMIDI: Bool { plugin.ports.contains { $0.kind == .atom && $0.isInput && $0.supportsMIDI } }
    /// The sequence tracks last attached, given to every new kernel (control thread).
    var sequenceTracks: [MIDITrackSchedule] = []
    /// How many of `sequenceTracks` come first as the node's own (a graph file's `midiFile` and `notes`).
    private var ownTrackCount = 0

    /// Makes `tracks` (a graph file's `midiFile` and `notes`, on a clock that starts with the
    /// node's first slice) the node's own: they play beside any sequence attached later. Before
    /// the node joins a graph; control thread.
    package func playFromStart(_ tracks: [MIDITrackSchedule]) {
        sequenceTracks = tracks
        ownTrackCount = tracks.count
    }
    /// The catalogue that instantiates it.
    package let world: LV2World

    // MARK: Shared (atomic): written by the kernel's render thread, read by control threads
    let reportedLatency = LV2LatencyReport()
    /// Non-finite input kept from the plugin, runaway output silenced (LV2Kernel counts them).
    let renderFaults = LV2RenderFaults()

    // MARK: Control thread only (read when the kernel is made)
    /// Output samples beyond this magnitude are taken as a plugin gone wrong (an unstable
    /// filter), not audio: the block is silenced and counted, and a plugin that keeps at it is
    /// muted (``LV2RenderFaults``). 1000 (+60 dBFS) by default; a plugin whose output is data
    /// rather than audio (a test probe) may need more. Set before the graph is initialized.
    public var outputLimit: Float = LV2RenderFaults.defaultOutputLimit

    /// The parameter name of the node's own bypass switch.
    public static let bypassName = "bypass"

    /// A node running `plugin` (from `world`, the shared catalogue when nil). Throws when the
    /// host cannot run it (a required feature, an atom/event port, no audio output, no liblilv).
    package init(id: String, plugin: LV2PluginInfo, world: LV2World? = nil) throws(LV2Error) {
        let world = if let world { world } else { try LV2World.shared() }
        try plugin.checkHostable()
        guard !plugin.audioOutputs.isEmpty else { throw .noAudioOutput(uri: plugin.uri) }
        // Validation makes the node too: a binary that cannot load is refused there, not at initialize.
        try world.checkLoadable(uri: plugin.uri)
        self.plugin = plugin
        self.world = world
        super.init(id: id, typeName: "lv2", inputBusCount: 1, outputBusCount: 1,
                   parameters: Self.parameterInfos(plugin))
        registerRenderFaultReporter()
        if !plugin.isHardRTCapable {
            // Once per node and plugin in a process: loading a graph file makes each node twice
            // (the validator runs the engine's rules on real nodes, then the graph is built).
            let key = id + " " + plugin.uri
            if Self.warned.withLock({ $0.insert(key).inserted }) {
                let line = Self.hardRTWarning(id: id, plugin: plugin) + "\n"
                _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
            }
        }
    }

    /// The node ids and plugin URIs already warned about (control threads only).
    private static let warned = ControlLock(Set<String>())

    /// The line written to stderr when a node is made for a plugin that does not declare
    /// `lv2:hardRTCapable`: the graph still runs it, but its `run` may allocate or block.
    package static func hardRTWarning(id: String, plugin: LV2PluginInfo) -> String {
        "warning: node \"\(id)\": LV2 plugin <\(plugin.uri)> is not hardRTCapable; its run may allocate or block on the render thread (possible dropouts when playing live)"
    }

    /// A node running the plugin with `uri`; throws ``LV2Error/pluginNotFound(uri:)`` when none is
    /// installed, ``LV2Error/libraryMissing(reason:)`` when liblilv cannot be loaded.
    public convenience init(id: String, uri: String) throws(LV2Error) {
        try self.init(id: id, uri: uri, world: LV2World.shared())
    }

    /// A node running the plugin with `uri` from `world`'s catalogue.
    package convenience init(id: String, uri: String, world: LV2World) throws(LV2Error) {
        try self.init(id: id, plugin: try world.plugin(uri: uri), world: world)
    }

    /// The parameters of a node hosting `plugin`: its control inputs by symbol, then `bypass`.
    package static func parameterInfos(_ plugin: LV2PluginInfo) -> [ParameterInfo] {
        var infos = plugin.controlInputs.map { port in
            let range = port.controlRange
            return ParameterInfo(address: ParameterAddress(name: port.symbol), unit: port.isToggled ? .boolean : .generic,
                                 minValue: range.lowerBound, maxValue: range.upperBound, defaultValue: port.startValue)
        }
        if !plugin.controlInputs.contains(where: { $0.symbol == bypassName }) {
            infos.append(ParameterInfo(address: ParameterAddress(name: bypassName), unit: .boolean,
                                       minValue: 0, maxValue: 1, defaultValue: 0))
        }
        return infos
    }

    /// The plugin's latency in frames as it last reported it (its `lv2:reportsLatency` output,
    /// measured at initialize and updated by every run); 0 for a plugin that reports none.
    public var latencyFrames: Int { reportedLatency.frames }

    /// How many instances run for `channelCount` input channels.
    func instanceCount(channels: Int) -> Int { plugin.runsPerChannel ? max(1, channels) : 1 }

    public override func resolveOutputFormats(inputFormats: [StreamFormat?], graphSampleRate: Double) throws(AudioGraphError) -> [StreamFormat] {
        if plugin.runsPerChannel {
            return try super.resolveOutputFormats(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        }
        let rate = processingSampleRate(inputFormats: inputFormats, graphSampleRate: graphSampleRate)
        let ins = plugin.audioInputs.count, outs = plugin.audioOutputs.count
        if ins > 0, let input = inputFormats.first ?? nil, input.channelCount != ins {
            throw .formatNotSupported(node: id, reason: "LV2 plugin <\(plugin.uri)> takes \(ins) audio input\(ins == 1 ? "" : "s"); input bus 0 brings \(input.channelCount) channel\(input.channelCount == 1 ? "" : "s") (put a converter with channelMap before it)")
        }
        if let declared = declaredFormat.channelCount, declared != outs {
            throw .formatNotSupported(node: id, reason: "LV2 plugin <\(plugin.uri)> has \(outs) audio output\(outs == 1 ? "" : "s"); the declared format has \(declared) channels")
        }
        return [StreamFormat.canonical(sampleRate: rate, channelCount: outs)]
    }

    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        do throws(LV2Error) {
            let k = try LV2Kernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
            if !sequenceTracks.isEmpty { k.receive(MIDISequenceSources(tracks: sequenceTracks)) }
            return k
        } catch {
            throw .nodeSetupFailed(node: id, reason: error.description)
        }
    }

    /// The one property: ``MIDISequenceSources/propertyName`` (sequences playing into the plugin).
    public override func validateProperty(_ name: String, _ value: any Sendable) throws(AudioGraphError) {
        guard name == MIDISequenceSources.propertyName, value is MIDISequenceSources else {
            throw .invalidProperty(node: id, name: name, reason: "no such property")
        }
    }

    public override func applyProperty(_ name: String, _ value: any Sendable) -> KernelMessage? {
        guard let m = value as? MIDISequenceSources else { return nil }
        // The node's own file and notes keep playing beside what is attached.
        let own = Array(sequenceTracks.prefix(ownTrackCount))
        sequenceTracks = own + m.tracks
        return own.isEmpty ? m : MIDISequenceSources(tracks: sequenceTracks)
    }
}

/// The latency a plugin reports, handed from the render thread to control threads.
///
/// Thread safety: any thread; lock-free (relaxed: a lone number with nothing published through it).
final class LV2LatencyReport: Sendable {
    private let value = Atomic<Int>(0)
    var frames: Int { value.load(ordering: .relaxed) }
    func store(_ frames: Int) { value.store(frames, ordering: .relaxed) }
}

extension LV2Node: RenderFaultReporting {
    /// What the node kept from and out of its plugin: non-finite input samples replaced by
    /// silence, blocks of non-finite or absurd output silenced, a mute; nil when nothing.
    public var renderFaultSummary: String? { renderFaults.summary(uri: plugin.uri, limit: outputLimit) }
}

extension LV2Properties {
    /// The properties of a node whose plugin is missing or unknown (`found` false).
    init(notFound uri: String) {
        self.init(plugin: uri)
        found = false
    }
}

extension LV2Node {
    /// The `lv2` node type: an installed LV2 plugin named by `properties.plugin` (its URI, looked
    /// up in ``PluginCatalogue``), whose parameters are its control inputs by port symbol (and
    /// `bypass`), from the catalogue rather than a table.
    package static let descriptor = NodeTypeDescriptor(
        name: "lv2", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["plugin"],
        decode: { reader in
            guard reader.has("plugin") else {
                reader.reportMissing("plugin")
                return LV2Properties(notFound: "")
            }
            guard let uri = reader.string("plugin") else { return LV2Properties(notFound: "") }
            switch PluginCatalogue.lookUp(uri) {
            case .success(let plugin): return plugin
            case .failure(let error):
                reader.reportInvalid("plugin", error.message)
                return LV2Properties(notFound: uri)
            }
        },
        optionParameters: { options in
            let plugin = options as? LV2Properties ?? LV2Properties(plugin: "")
            let names = plugin.parameters.map { $0.address.description }
            return OptionParameters(infos: plugin.parameters, unknownReason: plugin.parameters.isEmpty
                ? "the plugin was not found, so its parameters are unknown"
                : "LV2 plugin <\(plugin.plugin)> has \(names.joined(separator: ", "))")
        },
        makeNode: { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            let p = context.options(as: LV2Properties.self) ?? LV2Properties(plugin: "")
            do throws(LV2Error) { return try LV2Node(id: context.id, uri: p.plugin) } catch {
                throw .nodeSetupFailed(node: context.id, reason: error.description)
            }
        })
}
