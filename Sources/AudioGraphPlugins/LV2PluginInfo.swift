// What an installed LV2 plugin is: URI, name, ports and required features (read from its data by lilv).

/// An installed LV2 plugin as its bundle's data describes it (no binary loaded).
///
/// Thread safety: a value type; safe to share between threads.
package struct LV2PluginInfo: Sendable, Hashable {
    /// The plugin URI (`properties.plugin` of an `lv2` node).
    package var uri: String
    /// The human name (`doap:name`).
    package var name: String
    /// Every port, by index.
    package var ports: [LV2PortInfo]
    /// The features the plugin requires (`lv2:requiredFeature`), as URIs.
    package var requiredFeatures: [String]
    /// Whether the plugin declares `lv2:hardRTCapable` (its `run` is real-time safe). The host
    /// runs plugins without it too, warning once on stderr when a node is made.
    package var isHardRTCapable: Bool

    /// A description from its parts (`isHardRTCapable` defaults to true, as most plugins say).
    package init(uri: String, name: String, ports: [LV2PortInfo], requiredFeatures: [String], isHardRTCapable: Bool = true) {
        self.uri = uri
        self.name = name
        self.ports = ports
        self.requiredFeatures = requiredFeatures
        self.isHardRTCapable = isHardRTCapable
    }

    /// Audio input ports, by index: the channels of the input bus.
    package var audioInputs: [LV2PortInfo] { ports.filter { $0.kind == .audio && $0.isInput } }
    /// Audio output ports, by index: the channels of the output bus.
    package var audioOutputs: [LV2PortInfo] { ports.filter { $0.kind == .audio && !$0.isInput } }
    /// Control input ports, by index: the node's parameters (named by symbol).
    package var controlInputs: [LV2PortInfo] { ports.filter { $0.kind == .control && $0.isInput } }
    /// The control output that reports latency, if any.
    package var latencyPort: LV2PortInfo? { ports.first { $0.kind == .control && !$0.isInput && $0.reportsLatency } }

    /// Whether one instance per channel runs on a bus of any width (one audio input, one audio output).
    package var runsPerChannel: Bool { audioInputs.count == 1 && audioOutputs.count == 1 }

    /// The required features this host satisfies: the ones it passes to `instantiate`
    /// (`urid:map`, `urid:unmap`, `options:options`, `bufsz:boundedBlockLength`: see
    /// ``LV2InstanceFeatures``; `worker:schedule`: see ``LV2Worker``) and plugin properties it honours (`lv2:inPlaceBroken`: inputs and
    /// outputs are never the same buffer; `lv2:hardRTCapable`; `lv2:isLive`: runs are never
    /// cached, though an offline render runs them faster than real time). Anything else, such as
    /// `state:*` or `log:log`, is refused.
    package static let providedFeatures: Set<String> = [
        LV2URI.uridMap, LV2URI.uridUnmap, LV2URI.options, LV2URI.boundedBlockLength, LV2URI.workerSchedule,
        LV2URI.inPlaceBroken, LV2URI.hardRTCapable, LV2URI.isLive,
    ]

    /// Checks that the host can run the plugin: every required feature provided, every port of
    /// a kind it connects (audio, control, CV, atom) or optional.
    package func checkHostable() throws(LV2Error) {
        for feature in requiredFeatures where !Self.providedFeatures.contains(feature) {
            throw .missingFeature(uri: uri, feature: feature)
        }
        for port in ports where !port.isOptional {
            switch port.kind {
            case .audio, .control, .cv, .atom: continue
            case .event, .other: throw .unsupportedPort(uri: uri, symbol: port.symbol, kind: port.kind.rawValue)
            }
        }
    }
}
