// A node's `properties` object as a registered node type's decoder reads it (NodePropertyReader over the reader's checks).
import AudioGraphCore

/// The ``NodePropertyReader`` the loader gives a ``NodeTypeDescriptor``'s decoder: each getter
/// checks the JSON value with the reader's own rules and reports problems with the file name
/// and the key's location, exactly as for the stock types.
///
/// Thread safety: used on the loading thread only.
struct PropertyObjectReader: NodePropertyReader {
    let reader: DescriptionReader
    let properties: JSONObject
    let location: String
    let isPartial: Bool

    private func at(_ key: String) -> String { DescriptionReader.join(location, key) }

    func has(_ key: String) -> Bool { properties[key] != nil }

    func number(_ key: String, in range: ClosedRange<Double>?) -> Double? {
        guard let value = properties[key] else { return nil }
        return reader.number(value, at: at(key), range.map { .range($0) } ?? .any)
    }

    func time(_ key: String) -> Double? {
        properties[key].flatMap { reader.number($0, at: at(key), .time) }
    }

    func integer(_ key: String, in range: ClosedRange<Int>) -> Int? {
        properties[key].flatMap { reader.integer($0, at: at(key), in: range) }
    }

    func bool(_ key: String) -> Bool? { properties[key].flatMap { reader.bool($0, at: at(key)) } }

    func string(_ key: String) -> String? { properties[key].flatMap { reader.string($0, at: at(key)) } }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String, as type: T.Type) -> T? where T.RawValue == String {
        properties[key].flatMap { reader.choice($0, at: at(key), as: type) }
    }

    func format(_ key: String) -> FormatDescription? {
        properties[key].flatMap { reader.decodeFormat($0, at: at(key)) }
    }

    func channelMap(_ key: String, channels: ClosedRange<Int>) -> [Int]? {
        properties[key].flatMap { reader.channelMap($0, at: at(key), channels: channels) }
    }

    func file(_ key: String) -> (name: String, path: String)? {
        guard let name = string(key) else { return nil }
        guard !name.isEmpty else {
            reader.report(at(key), .invalidValue("the file name is empty"))
            return nil
        }
        return (name, GraphDescription.resolve(name, against: reader.baseDirectory))
    }

    func reportInvalid(_ key: String, _ reason: String) { reader.report(at(key), .invalidValue(reason)) }

    func reportMissing(_ key: String) {
        if !isPartial { reader.report(location, .missingKey(key)) }
    }

    var sampleRate: Double { reader.sampleRate }

    func positiveNumber(_ key: String) -> Double? { properties[key].flatMap { reader.number($0, at: at(key), .positive) } }

    func nonNegativeNumber(_ key: String) -> Double? { properties[key].flatMap { reader.number($0, at: at(key), .nonNegative) } }

    func duration(_ key: String) -> Double? { properties[key].flatMap { reader.number($0, at: at(key), .duration) } }

    func latency(_ key: String) -> Double? { properties[key].flatMap { reader.latency($0, at: at(key)) } }

    func fileToWrite(_ key: String) -> (name: String, path: String)? {
        guard let name = properties[key].flatMap({ reader.soundFileToWrite($0, at: at(key)) }) else { return nil }
        return (name, GraphDescription.resolve(name, against: reader.baseDirectory))
    }

    func isNumber(_ key: String) -> Bool {
        if case .number = properties[key] { return true }
        return false
    }

    func parameterValue(_ key: String, _ info: ParameterInfo) -> Double? {
        guard let value = properties[key], let number = reader.number(value, at: at(key)) else { return nil }
        return reader.checkParameterValue(number, info, at: at(key)) ? number : nil
    }

    func object(_ key: String, allowed: [String], required: [String]) -> (any NodePropertyReader)? {
        guard let value = properties[key], let object = reader.object(value, at: at(key), allowed: allowed, required: required) else { return nil }
        return PropertyObjectReader(reader: reader, properties: object, location: at(key), isPartial: isPartial)
    }

    func count(_ key: String) -> Int? { properties[key].flatMap { reader.array($0, at: at(key)) }?.count }

    func element(_ key: String, _ index: Int, allowed: [String], required: [String]) -> (any NodePropertyReader)? {
        guard case .array(let array) = properties[key], array.indices.contains(index) else { return nil }
        let location = DescriptionReader.join(at(key), index: index)
        guard let object = reader.object(array[index], at: location, allowed: allowed, required: required) else { return nil }
        return PropertyObjectReader(reader: reader, properties: object, location: location, isPartial: isPartial)
    }

    func reportInvalid(_ reason: String) { reader.report(location, .invalidValue(reason)) }

    func reportLimitExceeded(_ key: String, _ reason: String) { reader.report(at(key), .limitExceeded(reason)) }
}
