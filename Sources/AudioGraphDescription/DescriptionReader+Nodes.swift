// Decoding node objects: id, type, typed properties, parameters and automation.
import AudioGraphCore
import AudioGraphNodes
import AudioGraphPulse

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
        if case .lv2(let plugin) = node.configuration { return lv2Parameter(address, string, of: plugin, at: location) }
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
        func at(_ key: String) -> String { Self.join(location, key) }
        switch type {
        case .player:
            var result = PlayerProperties(file: "", path: "")
            if let value = properties["file"] {
                if let file = string(value, at: at("file")) {
                    if file.isEmpty { report(at("file"), .invalidValue("the file name is empty")) } else {
                        result.file = file
                        result.path = GraphDescription.resolve(file, against: baseDirectory)
                    }
                }
            } else if !partial {
                report(location, .missingKey("file"))
            }
            if let value = properties["loop"], let loop = bool(value, at: at("loop")) { result.loop = loop }
            if let value = properties["startTime"], let time = number(value, at: at("startTime"), .time) {
                result.startTime = time
            }
            if let value = properties["segment"],
               let segment = object(value, at: at("segment"), allowed: ["start", "duration"]) {
                var decoded = PlayerSegment()
                if let start = segment["start"], let time = number(start, at: Self.join(at("segment"), "start"), .time) {
                    decoded.start = time
                }
                if let duration = segment["duration"] {
                    decoded.duration = number(duration, at: Self.join(at("segment"), "duration"), .duration)
                }
                result.segment = decoded
            }
            return .player(result)
        case .input:
            var result = InputProperties()
            if let value = properties["device"], let device = string(value, at: at("device")) { result.device = device }
            if let value = properties["channels"],
               let channels = integer(value, at: at("channels"), in: 1...FormatDescription.maximumChannelCount) {
                result.channels = channels
            }
            if let value = properties["latency"], let latency = latency(value, at: at("latency")) { result.latency = latency }
            if let value = properties["channelMap"],
               let map = channelMap(value, at: at("channelMap"), channels: 0...(result.channels - 1)) {
                result.channelMap = map
            }
            return .input(result)
        case .environment:
            return .environment(decodeEnvironment(properties, at: location))
        case .eq:
            return .eq(decodeEQ(properties, at: location))
        case .lv2:
            return .lv2(decodeLV2(properties, at: location, partial: partial))
        case .recorder:
            var result = RecorderProperties(file: "", path: "")
            if let value = properties["file"] {
                if let file = soundFileToWrite(value, at: at("file")) {
                    result.file = file
                    result.path = GraphDescription.resolve(file, against: baseDirectory)
                }
            } else if !partial {
                report(location, .missingKey("file"))
            }
            if let value = properties["sampleType"] {
                result.sampleType = choice(value, at: at("sampleType"), as: SampleType.self)
            }
            return .recorder(result)
        case .output:
            var result = OutputProperties()
            if let value = properties["device"], let device = string(value, at: at("device")) { result.device = device }
            if let value = properties["latency"], let latency = latency(value, at: at("latency")) { result.latency = latency }
            if let value = properties["streamName"], let name = string(value, at: at("streamName")) { result.streamName = name }
            return .output(result)
        case .genericOutput:
            var result = GenericOutputProperties()
            if let value = properties["format"], let format = decodeFormat(value, at: at("format")) { result.format = format }
            return .genericOutput(result)
        default:
            // A registered type: its descriptor decodes, through the reader's checks.
            let reader = PropertyObjectReader(reader: self, properties: properties, location: location, isPartial: partial)
            return .registered(RegisteredNodeOptions(type: type, options: type.descriptor!.decode(reader)))
        }
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

    func decodeEnvironment(_ properties: JSONObject, at location: String) -> EnvironmentProperties {
        func at(_ key: String) -> String { Self.join(location, key) }
        var result = EnvironmentProperties()
        if let value = properties["distanceModel"],
           let model = object(value, at: at("distanceModel"), allowed: ["model", "referenceDistance", "maxDistance", "rolloffFactor"]) {
            let base = at("distanceModel")
            if let value = model["model"], let type = choice(value, at: Self.join(base, "model"), as: DistanceModelType.self) {
                result.distanceModel.model = type
            }
            if let value = model["referenceDistance"], let distance = number(value, at: Self.join(base, "referenceDistance"), .nonNegative) {
                result.distanceModel.referenceDistance = distance
            }
            if let value = model["maxDistance"], let distance = number(value, at: Self.join(base, "maxDistance"), .positive) {
                result.distanceModel.maxDistance = distance
            }
            if let value = model["rolloffFactor"], let factor = number(value, at: Self.join(base, "rolloffFactor"), .nonNegative) {
                result.distanceModel.rolloffFactor = factor
            }
            if result.distanceModel.model == .linear, result.distanceModel.maxDistance < result.distanceModel.referenceDistance {
                report(base, .invalidValue("maxDistance \(ParameterInfo.format(result.distanceModel.maxDistance)) must not be less than referenceDistance \(ParameterInfo.format(result.distanceModel.referenceDistance)) for the linear model"))
            }
        }
        if let value = properties["renderingAlgorithm"],
           let algorithm = choice(value, at: at("renderingAlgorithm"), as: RenderingAlgorithm.self) {
            result.renderingAlgorithm = algorithm
        }
        if let value = properties["hrtf"], let file = string(value, at: at("hrtf")) {
            if file.isEmpty { report(at("hrtf"), .invalidValue("the file name is empty")) } else {
                result.hrtf = file
                result.hrtfPath = GraphDescription.resolve(file, against: baseDirectory)
            }
        }
        if let value = properties["channels"], let channels = integer(value, at: at("channels"), in: 1...FormatDescription.maximumChannelCount) {
            if channels != 2 {
                report(at("channels"), .invalidValue("an environment's output is stereo: channels must be 2, found \(channels)"))
            }
        }
        if let value = properties["reverb"], let reverb = object(value, at: at("reverb"), allowed: ["enabled", "preset", "level"]) {
            let base = at("reverb")
            if let value = reverb["enabled"], let enabled = bool(value, at: Self.join(base, "enabled")) { result.reverb.enabled = enabled }
            if let value = reverb["preset"], let preset = choice(value, at: Self.join(base, "preset"), as: ReverbPreset.self) {
                result.reverb.preset = preset
            }
            if let value = reverb["level"], let level = number(value, at: Self.join(base, "level"), .range(-40...40)) {
                result.reverb.level = level
            }
        }
        return result
    }

    func decodeEQ(_ properties: JSONObject, at location: String) -> EQProperties {
        func at(_ key: String) -> String { Self.join(location, key) }
        var result = decodeEQBands(properties, at: location)
        if let value = properties["smoothing"], let smoothing = bool(value, at: at("smoothing")) { result.smoothing = smoothing }
        return result
    }

    private func decodeEQBands(_ properties: JSONObject, at location: String) -> EQProperties {
        func at(_ key: String) -> String { Self.join(location, key) }
        if properties["bands"] != nil, properties["preset"] != nil {
            report(location, .invalidValue("give either \"bands\" or \"preset\", not both"))
        }
        if let value = properties["preset"], let preset = choice(value, at: at("preset"), as: EQPreset.self) {
            return EQProperties(preset: preset, sampleRate: sampleRate)
        }
        guard let value = properties["bands"], let array = array(value, at: at("bands")) else { return EQProperties() }
        if array.count > EQProperties.maximumBandCount {
            report(at("bands"), .invalidValue("an eq has at most \(EQProperties.maximumBandCount) bands, found \(array.count)"))
        }
        var bands: [EQBand] = []
        for (index, element) in array.prefix(EQProperties.maximumBandCount).enumerated() {
            let base = Self.join(at("bands"), index: index)
            var band = EQBand(type: .peak)
            guard let object = object(element, at: base, allowed: ["type", "frequency", "gain", "q", "bypass"], required: ["type"]) else {
                bands.append(band)
                continue
            }
            if let value = object["type"], let type = choice(value, at: Self.join(base, "type"), as: EQFilterType.self) {
                band = EQBand(type: type)
            }
            let schema = NodeSchema.eq
            func check(_ key: String) -> Double? {
                guard let value = object[key] else { return nil }
                let path = Self.join(base, key)
                guard let number = number(value, at: path),
                      let info = schema.parameterInfo(for: ParameterAddress(scope: .global, element: index, group: "band", name: key),
                                                      sampleRate: sampleRate, inputBusCount: 1, bandCount: index + 1) else { return nil }
                return checkParameterValue(number, info, at: path) ? number : nil
            }
            if let frequency = check("frequency") { band.frequency = frequency } else if object["frequency"] == nil {
                band.frequency = min(1000, sampleRate / 2)
            }
            if let gain = check("gain") { band.gain = gain }
            if let q = check("q") { band.q = q }
            if let value = object["bypass"] {
                if case .number = value {
                    if let bypass = check("bypass") { band.bypass = bypass == 1 }
                } else if let bypass = bool(value, at: Self.join(base, "bypass")) {
                    band.bypass = bypass
                }
            }
            bands.append(band)
        }
        return EQProperties(bands: bands)
    }
}
