// The LV2 catalogue as graph files see it: lv2 node properties from a plugin URI.
import AudioGraphCore
import CLilvLazy

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

    /// Why liblilv cannot be loaded (it is opened on first use, not at start-up), as one line, or
    /// nil when it is loaded: checked before the shared world is made, so that a graph with an
    /// `lv2` node reports a missing library instead of the process ending at `lilv_world_new`.
    package static let libraryProblem: String? = {
        var error = [CChar](repeating: 0, count: 512)
        guard ag_lilv_load(&error, error.count) == 0 else { return nil }
        let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "liblilv cannot be loaded, so lv2 nodes cannot be used: \(reason.isEmpty ? "unknown reason" : reason)"
    }()

    /// Makes graph files find plugins in the shared world (``PluginCatalogue``). Idempotent.
    package static func registerWithGraphFiles() {
        PluginCatalogue.register { uri in
            if let problem = libraryProblem { return .failure(PluginLookupError(message: problem)) }
            return LV2World.shared.graphProperties(uri: uri)
        }
    }
}
