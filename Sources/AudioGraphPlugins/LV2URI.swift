// The LV2 and lilv URIs the host asks about (the C headers spell them as macros, which do not import).

/// URIs of the LV2 core vocabulary and lilv options used by the host.
///
/// Thread safety: constants; safe from any thread.
enum LV2URI {
    static let core = "http://lv2plug.in/ns/lv2core#"
    static let audioPort = core + "AudioPort"
    static let controlPort = core + "ControlPort"
    static let cvPort = core + "CVPort"
    static let inputPort = core + "InputPort"
    static let outputPort = core + "OutputPort"
    static let reportsLatency = core + "reportsLatency"
    static let connectionOptional = core + "connectionOptional"
    static let toggled = core + "toggled"
    static let integer = core + "integer"
    static let atomPort = "http://lv2plug.in/ns/ext/atom#AtomPort"
    static let eventPort = "http://lv2plug.in/ns/ext/event#EventPort"
    static let hardRTCapable = core + "hardRTCapable"
    static let inPlaceBroken = core + "inPlaceBroken"
    static let isLive = core + "isLive"
    static let uridMap = "http://lv2plug.in/ns/ext/urid#map"
    static let uridUnmap = "http://lv2plug.in/ns/ext/urid#unmap"
    static let options = "http://lv2plug.in/ns/ext/options#options"
    static let bufSize = "http://lv2plug.in/ns/ext/buf-size#"
    static let boundedBlockLength = bufSize + "boundedBlockLength"
    static let maxBlockLength = bufSize + "maxBlockLength"
    static let minBlockLength = bufSize + "minBlockLength"
    static let nominalBlockLength = bufSize + "nominalBlockLength"
    static let sequenceSize = bufSize + "sequenceSize"
    static let sampleRate = "http://lv2plug.in/ns/ext/parameters#sampleRate"
    static let atomInt = "http://lv2plug.in/ns/ext/atom#Int"
    static let atomFloat = "http://lv2plug.in/ns/ext/atom#Float"
    static let atomSequence = "http://lv2plug.in/ns/ext/atom#Sequence"
    static let atomChunk = "http://lv2plug.in/ns/ext/atom#Chunk"
    static let midiEvent = "http://lv2plug.in/ns/ext/midi#MidiEvent"
    static let workerSchedule = "http://lv2plug.in/ns/ext/worker#schedule"
    static let workerInterface = "http://lv2plug.in/ns/ext/worker#interface"
    /// lilv's world option naming the directories searched for bundles (`LILV_OPTION_LV2_PATH`).
    static let lilvLV2Path = "http://drobilla.net/ns/lilv#lv2-path"
}
