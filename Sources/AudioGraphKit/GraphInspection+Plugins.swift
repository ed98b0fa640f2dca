// What `audiograph inspect` adds for an lv2 node: the plugin, its ports and its latency.
import AudioGraphPlugins

extension GraphInspection {
    /// Indented lines describing an lv2 node's plugin (name, every port, latency at the node's
    /// rate with its initial parameter values); empty for other nodes.
    static func pluginLines(_ node: NodeDescription, sampleRate: Double) -> String {
        guard let properties = node.configuration.options(as: LV2InstrumentOptions.self)?.plugin ?? node.configuration.options(as: LV2Properties.self),
              let world = try? LV2World.shared(), let plugin = try? world.plugin(uri: properties.plugin) else { return "" }
        var s = "    plugin \(plugin.uri) \"\(plugin.name)\"\(plugin.realTimeNote)\n"
        for port in plugin.ports { s += "      port \(port.listing)\n" }
        let controls = Dictionary(uniqueKeysWithValues: node.initialParameterValues(sampleRate: sampleRate).map { ($0.key.name, $0.value) })
        if let frames = try? world.latency(uri: plugin.uri, sampleRate: sampleRate, controls: controls) {
            s += "    latency: \(frames) frames\n"
        }
        return s
    }
}
