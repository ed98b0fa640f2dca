// Decoding lv2 nodes: the plugin URI looked up in the catalogue, parameters by port symbol.
import AudioGraphCore
import AudioGraphPlugins

extension DescriptionReader {
    /// Decodes an lv2 node's properties: `plugin` is required and must name an installed plugin
    /// the host can run (reported on one line naming the URI otherwise).
    func decodeLV2(_ properties: JSONObject, at location: String, partial: Bool) -> LV2Properties {
        guard let value = properties["plugin"] else {
            if !partial { report(location, .missingKey("plugin")) }
            return LV2Properties(plugin: "")
        }
        let key = Self.join(location, "plugin")
        guard let uri = string(value, at: key) else { return LV2Properties(plugin: "") }
        switch PluginCatalogue.lookUp(uri) {
        case .success(let plugin): return plugin
        case .failure(let error):
            report(key, .invalidValue(error.message))
            return LV2Properties(plugin: uri)
        }
    }

    /// The lv2 parameter at `address` (a control input's symbol, or `bypass`), or nil (reported).
    func lv2Parameter(_ address: ParameterAddress, _ string: String, of plugin: LV2Properties,
                      at location: String) -> (ParameterAddress, ParameterInfo)? {
        if let info = plugin.parameters.first(where: { $0.address == address }) { return (address, info) }
        let names = plugin.parameters.map { $0.address.description }
        report(location, .unknownParameter(address: string, reason: plugin.parameters.isEmpty
            ? "the plugin was not found, so its parameters are unknown"
            : "LV2 plugin <\(plugin.plugin)> has \(names.joined(separator: ", "))"))
        return nil
    }
}
