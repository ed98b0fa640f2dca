// The lv2 node type as graph files see it here: the plugin's own options plus what an LV2 instrument plays (midiFile, notes).
import AudioGraphNodes
import AudioGraphPlugins

/// The options of a graph file's `lv2` node once AudioGraphOffline's loader has registered the node types: the
/// plugin (``LV2Properties``) and, for an instrument (a plugin with a MIDI atom input), what it
/// plays from the graph's start — `midiFile` (`midiTracks`, `midiChannels`) and `notes`, read and
/// scheduled exactly as a `sampler` node's (``SamplerProperties``' MIDI part). It lives here
/// because this module is the one that sees both the plugin host and the MIDI file reader.
///
/// Thread safety: a value; any thread.
package struct LV2InstrumentOptions: Hashable, Sendable {
    /// The plugin's options.
    package var plugin: LV2Properties
    /// What plays into it (only the MIDI fields are used).
    package var midi: SamplerProperties

    /// Whether the MIDI keys are refused for `plugin`: it was found and has no MIDI input (whatever
    /// its control ports; an unknown plugin is reported on `plugin` alone).
    package static func refusesMIDI(_ plugin: LV2Properties) -> Bool { plugin.found && !plugin.takesMIDI }

    /// `base` (``LV2Node``'s descriptor) with the MIDI keys: they are read as a sampler reads
    /// them, refused for a plugin without a MIDI input, scheduled into the node when it is made,
    /// and give the render's default length (last event plus the sampler's release tail).
    package static func descriptor(wrapping base: NodeTypeDescriptor) -> NodeTypeDescriptor {
        @Sendable func plugin(_ options: any NodeOptions) -> any NodeOptions {
            (options as? LV2InstrumentOptions)?.plugin ?? options
        }
        let decode: @Sendable (any NodePropertyReader) -> any NodeOptions = { reader in
            let decoded = base.decode(reader)
            guard let p = decoded as? LV2Properties else { return decoded }
            var midi = SamplerProperties()
            if refusesMIDI(p) {
                for key in SamplerProperties.midiKeys where reader.has(key) {
                    reader.reportInvalid(key, "LV2 plugin <\(p.plugin)> has no MIDI input (only an instrument plays \(key))")
                }
            } else {
                midi.decodeMIDI(reader)
            }
            return LV2InstrumentOptions(plugin: p, midi: midi)
        }
        let typedProperty: @Sendable (String, any NodeOptions) -> (any Sendable)? = { name, options in
            base.typedProperty(name, plugin(options))
        }
        var checkFiles: (@Sendable (any NodeOptions, any NodeCheckContext) -> Void)?
        if let check = base.checkFiles { checkFiles = { options, context in check(plugin(options), context) } }
        var checkFormat: (@Sendable (any NodeOptions, any NodeCheckContext) -> Void)?
        if let check = base.checkFormat { checkFormat = { options, context in check(plugin(options), context) } }
        var optionParameters: (@Sendable (any NodeOptions) -> OptionParameters)?
        if let op = base.optionParameters { optionParameters = { options in op(plugin(options)) } }
        let bandCount: @Sendable (any NodeOptions) -> Int = { options in base.bandCount(plugin(options)) }
        let defaults: @Sendable (any NodeOptions) -> [ParameterAddress: Double] = { options in base.parameterDefaults(plugin(options)) }
        let written: @Sendable (any NodeOptions) -> [NodeWrittenFile] = { options in base.writtenFiles(plugin(options)) }
        let end: @Sendable (any NodeOptions, (String) -> AudioFileInfo?) -> Double? = { options, files in
            if let length = (options as? LV2InstrumentOptions)?.midi.playbackLength { return length }
            return base.playbackEnd?(plugin(options), files)
        }
        let make: @Sendable (NodeBuildContext) throws(AudioGraphError) -> GraphNode = { (context: NodeBuildContext) throws(AudioGraphError) -> GraphNode in
            var c = context
            c.options = plugin(context.options)
            let node = try base.makeNode(c)
            if let midi = (context.options as? LV2InstrumentOptions)?.midi, let lv2 = node as? LV2Node {
                let tracks = try midi.tracksFromStart(node: context.id)
                if !tracks.isEmpty { lv2.playFromStart(tracks) }
            }
            return node
        }
        return NodeTypeDescriptor(
            name: base.name, kind: base.kind, inputBuses: base.inputBuses, outputBusCount: base.outputBusCount,
            propertyKeys: base.propertyKeys + SamplerProperties.midiKeys, runtimePropertyKeys: base.runtimePropertyKeys,
            convertsInputs: base.convertsInputs, parameters: base.parameters, decode: decode, typedProperty: typedProperty,
            checkFiles: checkFiles, checkFormat: checkFormat, bandCount: bandCount, parameterDefaults: defaults,
            optionParameters: optionParameters, writtenFiles: written, playbackEnd: end,
            maximumPerGraph: base.maximumPerGraph, makeNode: make)
    }
}
