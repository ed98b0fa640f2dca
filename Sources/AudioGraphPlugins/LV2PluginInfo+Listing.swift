// The text `audiograph plugins` and `audiograph inspect` print for a plugin and its ports.
import AudioGraphCore

extension LV2PortInfo {
    /// One line: `index symbol: kind direction[, range min...max, default d][ (reports latency)]`.
    package var listing: String {
        var s = "\(index) \(symbol): \(kind.rawValue) \(isInput ? "input" : "output")"
        if kind == .control && isInput {
            let range = controlRange
            s += ", range \(ParameterInfo.format(range.lowerBound))...\(ParameterInfo.format(range.upperBound))"
                + ", default \(ParameterInfo.format(startValue))"
            if isToggled { s += " (toggle)" }
        }
        if reportsLatency { s += " (reports latency)" }
        if isOptional { s += " (optional)" }
        return s + " \"\(name)\""
    }
}

extension LV2PluginInfo {
    /// Empty for a plugin declaring `lv2:hardRTCapable`, else `  (not hardRTCapable: runs with a
    /// warning)`: what `audiograph plugins` and `inspect` print after the plugin's name.
    package var realTimeNote: String { isHardRTCapable ? "" : "  (not hardRTCapable: runs with a warning)" }

    /// The plugin's URI and name, then one indented line per port and per required feature,
    /// and why the host refuses it when it does.
    package var listing: String {
        var lines = ["\(uri)  \"\(name)\"" + realTimeNote]
        for port in ports { lines.append("  port " + port.listing) }
        for feature in requiredFeatures {
            let provided = Self.providedFeatures.contains(feature)
            lines.append("  requires <\(feature)>\(provided ? "" : " (not provided: the host refuses this plugin)")")
        }
        if requiredFeatures.isEmpty {
            do throws(LV2Error) { try checkHostable() } catch { lines.append("  refused: \(error)") }
        }
        return lines.joined(separator: "\n")
    }
}
