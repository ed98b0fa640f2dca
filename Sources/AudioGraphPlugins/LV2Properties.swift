// The properties of an lv2 node: the plugin URI and what the catalogue said about it.
import AudioGraphCore

/// The `properties` of an `lv2` node: `plugin` (the plugin URI), with the plugin's parameters
/// and audio port counts as the ``PluginCatalogue`` described them when the file was read.
///
/// Thread safety: a value type; safe to share between threads.
public struct LV2Properties: Sendable, Hashable {
    /// The plugin URI (`properties.plugin`).
    public var plugin: String
    /// The node's parameters: the plugin's control inputs by symbol (its ranges and defaults), then `bypass`.
    public var parameters: [ParameterInfo]
    /// The plugin's audio input and output port counts (1 and 1: one instance per channel).
    public var audioInputs: Int
    public var audioOutputs: Int
    /// Whether the plugin takes MIDI (an atom input supporting `midi:MidiEvent`: an instrument).
    public var takesMIDI = false
    /// Whether the catalogue found the plugin (false when `plugin` is missing or unknown, the
    /// problem already reported on `plugin`).
    package var found = true

    public init(plugin: String, parameters: [ParameterInfo] = [], audioInputs: Int = 1, audioOutputs: Int = 1) {
        self.plugin = plugin
        self.parameters = parameters
        self.audioInputs = audioInputs
        self.audioOutputs = audioOutputs
    }

    /// Whether one instance runs per channel, so the node is a plain effect on a bus of any width.
    public var runsPerChannel: Bool { audioInputs == 1 && audioOutputs == 1 }
}
