// One node of a graph file: id, type, parameters, typed properties, buses, format, automation.
import AudioGraphCore

/// A node object of a graph file, decoded and validated.
///
/// Thread safety: a value type; safe to share between threads.
package struct NodeDescription: Sendable, Hashable {
    /// Unique id, `[A-Za-z0-9_-]+`.
    package var id: String
    /// The node type.
    package var type: NodeType
    /// Parameter values given in the file, by address (each within its range).
    package var parameters: [ParameterAddress: Double]
    /// The typed properties (defaults filled in).
    package var configuration: NodeConfiguration
    /// The raw `properties` object as written (what `setProperty` updates change).
    package var properties: JSONObject
    /// Input bus count: the `inputBusCount` key for mixer and environment (default 1), else the
    /// type's fixed count.
    package var inputBusCount: Int
    /// The declared format of output bus 0, nil when not given.
    package var format: FormatDescription?
    /// Automation events by parameter address, each list in file order.
    package var automation: [ParameterAddress: [AutomationEvent]]

    /// Creates a node description.
    package init(id: String, type: NodeType, parameters: [ParameterAddress: Double] = [:], configuration: NodeConfiguration,
                properties: JSONObject = JSONObject(), inputBusCount: Int? = nil, format: FormatDescription? = nil,
                automation: [ParameterAddress: [AutomationEvent]] = [:]) {
        self.id = id
        self.type = type
        self.parameters = parameters
        self.configuration = configuration
        self.properties = properties
        self.inputBusCount = inputBusCount ?? NodeSchema.for(type).inputBuses.defaultCount
        self.format = format
        self.automation = automation
    }

    /// The node type's schema.
    package var schema: NodeSchema { NodeSchema.for(type) }

    /// Output bus count (0 for output nodes, 1 otherwise).
    package var outputBusCount: Int { schema.outputBusCount }

    /// The count of the type's per-band parameter groups (an eq's bands); 0 for other types.
    package var bandCount: Int { configuration.bandCount }

    /// The parameter table of this node (ranges at `sampleRate`, defaults from the schema, then
    /// those its options set, e.g. eq band defaults from the bands; a plugin's own parameters).
    package func parameterInfos(sampleRate: Double) -> [ParameterInfo] {
        var infos = schema.parameterInfos(sampleRate: sampleRate, inputBusCount: inputBusCount, bandCount: bandCount)
        if case .registered(let r) = configuration, let descriptor = r.type.descriptor {
            if let extra = descriptor.optionParameters?(r.options) { infos += extra.infos }
            let defaults = descriptor.parameterDefaults(r.options)
            if !defaults.isEmpty {
                for index in infos.indices {
                    if let value = defaults[infos[index].address] { infos[index].defaultValue = value }
                }
            }
        }
        return infos
    }

    /// Every parameter's initial value: the `parameters` given, else eq band fields, else the
    /// schema's default. What the engine sets before the first slice (automation then applies).
    package func initialParameterValues(sampleRate: Double) -> [ParameterAddress: Double] {
        var values: [ParameterAddress: Double] = [:]
        for info in parameterInfos(sampleRate: sampleRate) {
            values[info.address] = parameters[info.address] ?? info.defaultValue
        }
        return values
    }
}

extension NodeDescription {
    /// The node as the engine's structural rules see it (``GraphStructure``).
    package var shape: NodeShape {
        NodeShape(id: id, inputBusCount: inputBusCount, outputBusCount: outputBusCount, isOutput: schema.kind == .output)
    }
}
