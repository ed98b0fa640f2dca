// Decoding node objects: id, type, typed properties, parameters and automation.
import AudioGraphCore

extension DescriptionReader {
    static let nodeKeys = ["id", "type", "parameters", "properties", "inputBusCount", "format", "automation"]

    /// Whether `id` matches `[A-Za-z0-9_-]+`.
    static func isValidIdentifier(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// Decodes a node object; nil when its id or type is unusable (reported).
    func decodeNode(_ value: JSONValue, at baseLocation: String) -> NodeDescription? {
        guard case .object(let object) = value else {
            report(baseLocation, .wrongType(expected: "a node object", found: value.typeDescription))
            return nil
        }
        var id: String?
        var location = baseLocation
        if let idValue = object["id"] {
            if let string = string(idValue, at: Self.join(baseLocation, "id")) {
                id = string
                location = "\(baseLocation) (id \"\(string)\")"
                if !Self.isValidIdentifier(string) {
                    report(Self.join(location, "id"), .invalidIdentifier(string))
                }
            }
        } else {
            report(baseLocation, .missingKey("id"))
        }
        _ = self.object(value, at: location, allowed: Self.nodeKeys)
        var type: NodeType?
        if let typeValue = object["type"] {
            type = choice(typeValue, at: Self.join(location, "type"), as: NodeType.self)
        } else {
            report(location, .missingKey("type"))
        }
        guard let id, let type else {
            if let id { brokenNodeIDs.insert(id) }
            return nil
        }
        if nodeLocations[id] == nil { nodeLocations[id] = location }
        let schema = NodeSchema.for(type)

        var inputBusCount = schema.inputBuses.defaultCount
        if let value = object["inputBusCount"] {
            let key = Self.join(location, "inputBusCount")
            if schema.inputBuses.isVariable {
                if let count = integer(value, at: key, in: schema.inputBuses.minimum...schema.inputBuses.maximum) {
                    inputBusCount = count
                }
            } else if case .number(let number) = value, number.intValue == schema.inputBuses.defaultCount {
                // Stating the fixed count is harmless.
            } else {
                report(key, .invalidValue("\(schema.article) \(type.rawValue) node has \(schema.inputBuses.defaultCount) input bus\(schema.inputBuses.defaultCount == 1 ? "" : "es"); inputBusCount is for mixer and environment nodes"))
            }
        }

        var format: FormatDescription?
        if let value = object["format"] { format = decodeFormat(value, at: Self.join(location, "format")) }

        var properties = JSONObject()
        let propertiesLocation = Self.join(location, "properties")
        if let value = object["properties"] {
            if case .object(let given) = value { properties = given } else {
                report(propertiesLocation, .wrongType(expected: "an object", found: value.typeDescription))
            }
        }
        let configuration = decodeConfiguration(type, properties, at: propertiesLocation)

        var node = NodeDescription(id: id, type: type, configuration: configuration, properties: properties,
                                   inputBusCount: inputBusCount, format: format)

        if let value = object["parameters"] {
            let parametersLocation = Self.join(location, "parameters")
            if case .object(let parameters) = value {
                for member in parameters {
                    let key = Self.join(parametersLocation, member.key)
                    guard let (address, info) = parameter(member.key, of: node, at: key),
                          let number = number(member.value, at: key) else { continue }
                    if checkParameterValue(number, info, at: key) { node.parameters[address] = number }
                }
            } else {
                report(parametersLocation, .wrongType(expected: "an object", found: value.typeDescription))
            }
        }

        if let value = object["automation"] {
            let automationLocation = Self.join(location, "automation")
            if case .object(let automation) = value {
                let initial = node.initialParameterValues(sampleRate: sampleRate)
                for member in automation {
                    let key = Self.join(automationLocation, member.key)
                    guard let (address, info) = parameter(member.key, of: node, at: key) else { continue }
                    guard let events = array(member.value, at: key) else { continue }
                    node.automation[address] = decodeAutomation(events, info: info, initialValue: initial[address] ?? info.defaultValue, at: key)
                }
            } else {
                report(automationLocation, .wrongType(expected: "an object", found: value.typeDescription))
            }
        }
        return node
    }

    /// The parameter named `string` on `node`, or nil (reported).
    func parameter(_ string: String, of node: NodeDescription, at location: String) -> (ParameterAddress, ParameterInfo)? {
        guard let address = ParameterAddress(string) else {
            report(location, .unknownParameter(address: string, reason: "not an address (write name, group.N.name or input.N.name)"))
            return nil
        }
        if case .registered(let r) = node.configuration, let extra = r.type.descriptor?.optionParameters?(r.options) {
            if let info = extra.infos.first(where: { $0.address == address }) { return (address, info) }
            report(location, .unknownParameter(address: string, reason: extra.unknownReason))
            return nil
        }
        let schema = node.schema
        guard let info = schema.parameterInfo(for: address, sampleRate: sampleRate, inputBusCount: node.inputBusCount,
                                              bandCount: node.bandCount) else {
            report(location, .unknownParameter(address: string, reason: schema.explainUnknown(address, inputBusCount: node.inputBusCount,
                                                                                                 bandCount: node.bandCount)))
            return nil
        }
        return (address, info)
    }

    /// Whether `value` may be given to the parameter `info` (reported when not).
    func checkParameterValue(_ value: Double, _ info: ParameterInfo, at location: String) -> Bool {
        if info.unit == .boolean {
            guard value == 0 || value == 1 else {
                report(location, .invalidValue("\(ParameterInfo.format(value)) must be 0 or 1"))
                return false
            }
            return true
        }
        guard info.contains(value) else {
            report(location, .outOfRange(value: value, range: info.rangeDescription))
            return false
        }
        return true
    }

    // MARK: Properties

    /// Decodes a type's properties; invalid fields are reported and keep their defaults.
    /// With `partial`, required keys may be absent (a `setProperty` value checked on its own).
    func decodeConfiguration(_ type: NodeType, _ properties: JSONObject, at location: String,
                             partial: Bool = false) -> NodeConfiguration {
        let schema = NodeSchema.for(type)
        for key in properties.keys where !schema.propertyKeys.contains(key) {
            report(Self.join(location, key), .unknownKey(key, allowed: schema.propertyKeys))
        }
        guard let descriptor = type.descriptor else { return .unresolved }
        // The type's descriptor decodes, through the reader's checks.
        let reader = PropertyObjectReader(reader: self, properties: properties, location: location, isPartial: partial)
        return .registered(RegisteredNodeOptions(type: type, options: descriptor.decode(reader)))
    }

    /// A channel map: 1...``FormatDescription/maximumChannelCount`` channel indices in `channels`
    /// (reported and nil when any entry is not).
    func channelMap(_ value: JSONValue, at location: String, channels: ClosedRange<Int>) -> [Int]? {
        guard let array = array(value, at: location) else { return nil }
        guard !array.isEmpty && array.count <= FormatDescription.maximumChannelCount else {
            report(location, .invalidValue("a channel map has 1...\(FormatDescription.maximumChannelCount) entries, found \(array.count)"))
            return nil
        }
        var map: [Int] = []
        for (index, entry) in array.enumerated() {
            if let channel = integer(entry, at: Self.join(location, index: index), in: channels) { map.append(channel) }
        }
        return map.count == array.count ? map : nil
    }

    /// A latency in milliseconds: > 0 and at most ``GraphDescription/maximumLatency``.
    func latency(_ value: JSONValue, at location: String) -> Double? {
        guard let ms = number(value, at: location, .positive) else { return nil }
        guard ms <= GraphDescription.maximumLatency else {
            report(location, .limitExceeded("\(ParameterInfo.format(ms)) ms is more than the largest latency accepted, \(ParameterInfo.format(GraphDescription.maximumLatency)) ms"))
            return nil
        }
        return ms
    }
}
