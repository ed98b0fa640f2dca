// The LV2 catalogue as graph files see it: lv2 node properties from a plugin URI.
import AudioGraphCore

extension LV2World {
    /// What a graph file's `lv2` node with `uri` is: its parameters and audio port counts, or a
    /// one-line reason the host cannot run it (unknown URI, missing feature, port kind).
    package func graphProperties(uri: String) -> Result<LV2Properties, PluginLookupError> {
        do throws(LV2Error) {
            let info = try plugin(uri: uri)
            try info.checkHostable()
            guard !info.audioOutputs.isEmpty else { throw .noAudioOutput(uri: uri) }
            var properties = LV2Properties(plugin: uri, parameters: LV2Node.parameterInfos(info),
                                           audioInputs: info.audioInputs.count, audioOutputs: info.audioOutputs.count)
            properties.takesMIDI = info.ports.contains { $0.kind == .atom && $0.isInput && $0.supportsMIDI }
            return .success(properties)
        } catch {
            return .failure(PluginLookupError(message: error.description))
        }
    }

    /// Makes graph files find plugins in the shared world (``PluginCatalogue``). Idempotent.
    package static func registerWithGraphFiles() {
        PluginCatalogue.register { uri in
            do throws(LV2Error) {
                return try LV2World.shared().graphProperties(uri: uri)
            } catch {
                return .failure(PluginLookupError(message: error.description))
            }
        }
    }
}
