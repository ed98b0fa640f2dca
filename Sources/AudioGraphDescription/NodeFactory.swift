// Creating engine nodes from node descriptions: each type's descriptor makes its node.
import AudioGraphCore

/// Creates nodes from their descriptions, through their types' descriptors.
///
/// Thread safety: control threads only (creating a player probes its file).
package enum NodeFactory {
    /// A node for `description` with its initial parameter values and automation set.
    ///
    /// - Parameter outputs: what an output node becomes (see ``OutputPlacement``).
    package static func makeNode(_ description: NodeDescription, sampleRate: Double,
                                outputs: OutputPlacement = .asDescribed) throws(AudioGraphError) -> GraphNode {
        guard case .registered(let r) = description.configuration, let descriptor = r.type.descriptor else {
            throw .invalidProperty(node: description.id, name: "type", reason: "the node's type is not known")
        }
        let node = try descriptor.makeNode(NodeBuildContext(id: description.id, sampleRate: sampleRate,
                                                            inputBusCount: description.inputBusCount, options: r.options,
                                                            rendersOffline: outputs == .offline, placement: outputs))
        if let f = description.format {
            let declared = f.partialStreamFormat
            if declared.sampleRate != nil { node.declaredFormat.sampleRate = declared.sampleRate }
            if declared.channelCount != nil { node.declaredFormat.channelCount = declared.channelCount }
            // Processing is canonical float whatever these say; a node without an output bus
            // (genericOutput) refuses them rather than ignore them.
            if declared.sampleType != nil { node.declaredFormat.sampleType = declared.sampleType }
            if declared.isInterleaved != nil { node.declaredFormat.isInterleaved = declared.isInterleaved }
        }
        var initial = description.initialParameterValues(sampleRate: sampleRate)
        if case .registered = description.configuration {
            // A descriptor's factory may start parameters away from the table's defaults (the
            // distortion's `preset`): only the values the file writes override what it set.
            initial = initial.filter { description.parameters[$0.key] != nil }
        }
        for (address, value) in initial {
            guard let p = node.parameter(at: address) else { continue }
            try p.setValue(value)
        }
        for (address, events) in description.automation {
            guard let p = node.parameter(at: address) else { throw .parameterNotFound(node: node.id, address: address.description) }
            do {
                let timeline = try AutomationTimeline(events: events,
                                                      defaultValue: initial[address] ?? p.value)
                try node.setAutomation(timeline, for: address.description)
            } catch {
                throw .invalidProperty(node: node.id, name: "automation.\(address)", reason: "\(error)")
            }
        }
        return node
    }
}
