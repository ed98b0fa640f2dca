// Turns parsed JSON into description values, collecting every problem with its JSON location.
import AudioGraphCore

/// Decodes a graph document. Never stops at the first problem: each decoder reports what is
/// wrong and carries on with a default, so one pass finds every problem it can.
///
/// Thread safety: used by one thread at a time (the loading thread).
final class DescriptionReader {
    let fileName: String
    let baseDirectory: String
    /// The graph's rate (parameter ranges depend on it); set before nodes are decoded.
    var sampleRate = GraphDescription.defaultSampleRate
    /// Problems found, in order.
    var errors: [GraphDescriptionError] = []
    /// Ids of node objects that could not be decoded at all (so references to them are not
    /// reported a second time as missing nodes).
    var brokenNodeIDs = Set<String>()
    /// Where each node (by id, first definition) was defined, for messages.
    var nodeLocations: [String: String] = [:]

    init(fileName: String, baseDirectory: String) {
        self.fileName = fileName
        self.baseDirectory = baseDirectory
    }

    // MARK: Reporting

    func report(_ location: String, _ problem: GraphDescriptionProblem) {
        errors.append(GraphDescriptionError(fileName: fileName, location: location, problem: problem))
    }

    static func join(_ base: String, _ key: String) -> String { base.isEmpty ? key : "\(base).\(key)" }
    static func join(_ base: String, index: Int) -> String { "\(base)[\(index)]" }

    // MARK: Typed accessors

    /// The object at `location`, with unknown and missing keys reported.
    func object(_ value: JSONValue, at location: String, allowed: [String], required: [String] = []) -> JSONObject? {
        guard case .object(let object) = value else {
            report(location, .wrongType(expected: "an object", found: value.typeDescription))
            return nil
        }
        for key in object.keys where !allowed.contains(key) {
            report(Self.join(location, key), .unknownKey(key, allowed: allowed))
        }
        for key in required where object[key] == nil {
            report(location, .missingKey(key))
        }
        return object
    }

    func array(_ value: JSONValue, at location: String) -> [JSONValue]? {
        guard case .array(let array) = value else {
            report(location, .wrongType(expected: "an array", found: value.typeDescription))
            return nil
        }
        return array
    }

    func string(_ value: JSONValue, at location: String) -> String? {
        guard case .string(let string) = value else {
            report(location, .wrongType(expected: "a string", found: value.typeDescription))
            return nil
        }
        return string
    }

    func bool(_ value: JSONValue, at location: String) -> Bool? {
        guard case .bool(let bool) = value else {
            report(location, .wrongType(expected: "true or false", found: value.typeDescription))
            return nil
        }
        return bool
    }

    /// A rule for a number besides being finite.
    enum NumberRule {
        case any
        case positive
        case nonNegative
        case range(ClosedRange<Double>)
        /// Seconds on the graph timeline: 0...``GraphDescription/maximumTime``.
        case time
        /// A length in seconds: > 0 and at most ``GraphDescription/maximumTime``.
        case duration
        /// A rate in hertz: ``GraphDescription/sampleRateRange``.
        case sampleRate
    }

    func number(_ value: JSONValue, at location: String, _ rule: NumberRule = .any) -> Double? {
        guard case .number(let number) = value else {
            report(location, .wrongType(expected: "a number", found: value.typeDescription))
            return nil
        }
        let x = number.value
        switch rule {
        case .any: break
        case .positive:
            if !(x > 0) { report(location, .invalidValue("\(number.text) must be greater than 0")); return nil }
        case .nonNegative:
            if !(x >= 0) { report(location, .invalidValue("\(number.text) must not be negative")); return nil }
        case .range(let range):
            if !range.contains(x) {
                report(location, .outOfRange(value: x, range: "\(ParameterInfo.format(range.lowerBound))...\(ParameterInfo.format(range.upperBound))"))
                return nil
            }
        case .time:
            if !(x >= 0) { report(location, .invalidValue("\(number.text) must not be negative")); return nil }
            if x > GraphDescription.maximumTime { report(location, .limitExceeded(Self.timeLimit(number.text))); return nil }
        case .duration:
            if !(x > 0) { report(location, .invalidValue("\(number.text) must be greater than 0")); return nil }
            if x > GraphDescription.maximumTime { report(location, .limitExceeded(Self.timeLimit(number.text))); return nil }
        case .sampleRate:
            let r = GraphDescription.sampleRateRange
            if !(x > 0) { report(location, .invalidValue("\(number.text) must be greater than 0")); return nil }
            if !r.contains(x) {
                report(location, .limitExceeded("\(number.text) Hz is outside the rates accepted, \(ParameterInfo.format(r.lowerBound))...\(ParameterInfo.format(r.upperBound)) Hz"))
                return nil
            }
        }
        return x
    }

    /// A number as written in the file (its JSON spelling).
    static func spelling(_ value: JSONValue) -> String {
        if case .number(let number) = value { return number.text }
        return value.typeDescription
    }

    /// The message for a time beyond ``GraphDescription/maximumTime``.
    static func timeLimit(_ text: String) -> String {
        "\(text) s is longer than the longest time accepted, \(ParameterInfo.format(GraphDescription.maximumTime)) s"
    }

    func integer(_ value: JSONValue, at location: String, in range: ClosedRange<Int>) -> Int? {
        guard case .number(let number) = value else {
            report(location, .wrongType(expected: "an integer", found: value.typeDescription))
            return nil
        }
        guard let int = number.intValue else {
            report(location, .invalidValue("\(number.text) must be an integer"))
            return nil
        }
        guard range.contains(int) else {
            report(location, .outOfRange(value: Double(int), range: "\(range.lowerBound)...\(range.upperBound)"))
            return nil
        }
        return int
    }

    func choice<T: RawRepresentable & CaseIterable>(_ value: JSONValue, at location: String, as type: T.Type) -> T?
    where T.RawValue == String {
        guard let string = string(value, at: location) else { return nil }
        guard let choice = T(rawValue: string) else {
            report(location, .notOneOf(string, allowed: T.allCases.map(\.rawValue)))
            return nil
        }
        return choice
    }

    /// A bus string `node` / `node:N`.
    func busReference(_ value: JSONValue, at location: String) -> BusReference? {
        guard let string = string(value, at: location) else { return nil }
        guard let reference = BusReference(string) else {
            report(location, .invalidBusReference(string))
            return nil
        }
        return reference
    }

    // MARK: Document

    static let documentKeys = ["version", "sampleRate", "maximumFramesPerSlice", "duration", "nodes", "connections", "updates", "taps"]

    /// Decodes the document; the result holds every part that could be decoded.
    func decodeDocument(_ root: JSONValue) -> GraphDescription {
        var graph = GraphDescription(fileName: fileName, baseDirectory: baseDirectory)
        guard let object = object(root, at: "", allowed: Self.documentKeys, required: ["version", "nodes", "connections"]) else {
            return graph
        }
        if let value = object["version"] {
            if case .number(let number) = value {
                if number.value != 1 { report("version", .unsupportedVersion(number.text)) }
            } else {
                report("version", .wrongType(expected: "the number 1", found: value.typeDescription))
            }
        }
        if let value = object["sampleRate"], let rate = number(value, at: "sampleRate", .sampleRate) {
            graph.sampleRate = rate
        }
        sampleRate = graph.sampleRate
        if let value = object["maximumFramesPerSlice"],
           let frames = integer(value, at: "maximumFramesPerSlice", in: 1...GraphDescription.maximumFramesPerSliceLimit) {
            graph.maximumFramesPerSlice = frames
        }
        if let value = object["duration"], let duration = number(value, at: "duration", .duration) {
            graph.duration = duration
        }
        if let value = object["nodes"], let nodes = array(value, at: "nodes") {
            if nodes.count > GraphDescription.maximumNodeCount {
                // Not decoded further: every other check would only repeat the same excess.
                report("nodes", .limitExceeded("\(nodes.count) nodes are more than a graph may hold, \(GraphDescription.maximumNodeCount)"))
                return graph
            }
            hasNodeList = true
            for (index, element) in nodes.enumerated() {
                if let node = decodeNode(element, at: Self.join("nodes", index: index)) {
                    graph.nodes.append(node)
                    nodeLocationList.append("\(Self.join("nodes", index: index)) (id \"\(node.id)\")")
                }
            }
        }
        (graph.connections, connectionLocations) = decodeList(object, "connections", decodeConnection(_:at:))
        (graph.updates, updateLocations) = decodeList(object, "updates", decodeUpdate(_:at:))
        (graph.taps, tapLocations) = decodeList(object, "taps", decodeTap(_:at:))
        return graph
    }

    /// JSON locations of the decoded connections, updates and taps, parallel to the graph's arrays.
    var nodeLocationList: [String] = []
    /// Whether the document had a `nodes` array (the output-node check needs one).
    var hasNodeList = false
    /// The elements of the array at `key` that decode, each with its location ("taps[2]"); an
    /// element that does not decode is reported by `decode` and left out.
    private func decodeList<Element>(_ object: JSONObject, _ key: String,
                                     _ decode: (JSONValue, String) -> Element?) -> ([Element], [String]) {
        var elements: [Element] = [], locations: [String] = []
        guard let value = object[key], let list = array(value, at: key) else { return ([], []) }
        for (index, element) in list.enumerated() {
            let location = Self.join(key, index: index)
            if let decoded = decode(element, location) {
                elements.append(decoded)
                locations.append(location)
            }
        }
        return (elements, locations)
    }

    var connectionLocations: [String] = []
    var updateLocations: [String] = []
    var tapLocations: [String] = []
    /// Locations of each update's decoded actions, by the update's location.
    var actionLocations: [String: [String]] = [:]

    func decodeConnection(_ value: JSONValue, at location: String) -> ConnectionDescription? {
        guard let object = object(value, at: location, allowed: ["from", "to", "parameter"], required: ["from", "to"]) else { return nil }
        let from = object["from"].flatMap { busReference($0, at: Self.join(location, "from")) }
        let to = object["to"].flatMap { busReference($0, at: Self.join(location, "to")) }
        var parameter: ParameterAddress?
        if let value = object["parameter"] {
            let path = Self.join(location, "parameter")
            guard let text = string(value, at: path) else { return nil }
            guard let address = ParameterAddress(text) else {
                report(path, .invalidValue("\"\(text)\" is not a parameter address (name, input.N.name, band.N.name, listener.name)"))
                return nil
            }
            if let to, to.bus != 0 {
                report(Self.join(location, "to"), .invalidValue("a connection into a parameter names the node only, not an input bus"))
                return nil
            }
            parameter = address
        }
        guard let from, let to else { return nil }
        return ConnectionDescription(from: from, to: to, parameter: parameter)
    }

    func decodeTap(_ value: JSONValue, at location: String) -> TapDescription? {
        guard let object = object(value, at: location, allowed: ["node", "bus", "file"], required: ["node", "file"]) else { return nil }
        let node = object["node"].flatMap { string($0, at: Self.join(location, "node")) }
        var bus = 0
        if let value = object["bus"] {
            guard let index = integer(value, at: Self.join(location, "bus"), in: 0...Int(Int32.max)) else { return nil }
            bus = index
        }
        guard let file = object["file"].flatMap({ soundFileToWrite($0, at: Self.join(location, "file")) }) else { return nil }
        guard let node else { return nil }
        return TapDescription(node: node, bus: bus, file: file, path: GraphDescription.resolve(file, against: baseDirectory))
    }

    /// A sound file a tap or recorder writes: a string whose extension names a type of
    /// ``TapDescription/supportedExtensions`` (reported and nil otherwise).
    func soundFileToWrite(_ value: JSONValue, at location: String) -> String? {
        guard let file = string(value, at: location) else { return nil }
        guard let ext = TapDescription.fileExtension(of: file), TapDescription.supportedExtensions[ext] != nil else {
            report(location, .unsupportedTapFile(file, allowed: TapDescription.supportedExtensions.keys.sorted()))
            return nil
        }
        return file
    }

    func decodeFormat(_ value: JSONValue, at location: String) -> FormatDescription? {
        guard let object = object(value, at: location, allowed: ["sampleRate", "channels", "sampleType", "interleaved"]) else {
            return nil
        }
        var format = FormatDescription()
        if let value = object["sampleRate"] { format.sampleRate = number(value, at: Self.join(location, "sampleRate"), .sampleRate) }
        if let value = object["channels"] {
            format.channels = integer(value, at: Self.join(location, "channels"), in: 1...FormatDescription.maximumChannelCount)
        }
        if let value = object["sampleType"] { format.sampleType = choice(value, at: Self.join(location, "sampleType"), as: SampleType.self) }
        if let value = object["interleaved"] { format.interleaved = bool(value, at: Self.join(location, "interleaved")) }
        return format
    }
}
