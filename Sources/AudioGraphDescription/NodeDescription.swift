// One node of a graph file: id, type, parameters, typed properties, buses, format, automation.
import AudioGraphCore

/// A node object of a graph file, decoded and validated.
///
/// Thread safety: a value type; safe to share between threads.
public struct NodeDescription: Sendable, Hashable {
    /// Unique id, `[A-Za-z0-9_-]+`.
    public var id: String
    /// The node type.
    public var type: NodeType
    /// Parameter values given in the file, by address (each within its range).
    public var parameters: [ParameterAddress: Double]
    /// The typed properties (defaults filled in).
    public var configuration: NodeConfiguration
    /// The raw `properties` object as written (what `setProperty` updates change).
    public var properties: JSONObject
    /// Input bus count: the `inputBusCount` key for mixer and environment (default 1), else the
    /// type's fixed count.
    public var inputBusCount: Int
    /// The declared format of output bus 0, nil when not given.
    public var format: FormatDescription?
    /// Automation events by parameter address, each list in file order.
    public var automation: [ParameterAddress: [AutomationEvent]]

    /// Creates a node description.
    public init(id: String, type: NodeType, parameters: [ParameterAddress: Double] = [:], configuration: NodeConfiguration,
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
    public var schema: NodeSchema { NodeSchema.for(type) }

    /// Output bus count (0 for output nodes, 1 otherwise).
    public var outputBusCount: Int { schema.outputBusCount }

    /// The count of the type's per-band parameter groups (an eq's bands); 0 for other types.
    public var bandCount: Int { configuration.bandCount }

    /// The parameter table of this node (ranges at `sampleRate`, defaults from the schema, then
    /// those its options set, e.g. eq band defaults from the bands; a plugin's own parameters).
    public func parameterInfos(sampleRate: Double) -> [ParameterInfo] {
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
    public func initialParameterValues(sampleRate: Double) -> [ParameterAddress: Double] {
        var values: [ParameterAddress: Double] = [:]
        for info in parameterInfos(sampleRate: sampleRate) {
            values[info.address] = parameters[info.address] ?? info.defaultValue
        }
        return values
    }
}
