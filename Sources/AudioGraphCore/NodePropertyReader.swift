// How a node type's decoder reads its `properties`: typed getters that report problems at the key's place in the file.

/// The `properties` object of one node, as a ``NodeTypeDescriptor``'s decoder reads it. Each
/// getter returns the value of `key` when it is there and valid; when it is there but invalid
/// (wrong JSON type, out of range, not one of the choices) it reports one problem naming the
/// file and the key's location and returns nil; when it is absent it returns nil silently.
///
/// Thread safety: used on the loading thread only.
package protocol NodePropertyReader {
    /// Whether the object has `key`.
    func has(_ key: String) -> Bool
    /// A number, optionally within `range`.
    func number(_ key: String, in range: ClosedRange<Double>?) -> Double?
    /// A time on the graph's timeline in seconds (0 up to the format's longest time).
    func time(_ key: String) -> Double?
    /// An integer within `range`.
    func integer(_ key: String, in range: ClosedRange<Int>) -> Int?
    /// true or false.
    func bool(_ key: String) -> Bool?
    /// A string.
    func string(_ key: String) -> String?
    /// One of the type's string values (the message lists them).
    func choice<T: RawRepresentable & CaseIterable>(_ key: String, as type: T.Type) -> T? where T.RawValue == String
    /// A partial stream format object (`sampleRate`, `channels`, `sampleType`, `interleaved`).
    func format(_ key: String) -> FormatDescription?
    /// A channel map: 1...32 entries, each within `channels` (-1: silence).
    func channelMap(_ key: String, channels: ClosedRange<Int>) -> [Int]?
    /// An array of `count` finite numbers (the IIR filter's coefficients, a periodic wave's terms).
    func numbers(_ key: String, count: ClosedRange<Int>) -> [Double]?
    /// A file name and its path resolved against the graph file's folder (an empty name is reported).
    func file(_ key: String) -> (name: String, path: String)?
    /// Reports that the value of `key` is invalid, with `reason` (one line).
    func reportInvalid(_ key: String, _ reason: String)
    /// Reports that required `key` is missing (not when the value is checked on its own, ``isPartial``).
    func reportMissing(_ key: String)
    /// True when a `setProperty` value is checked on its own: required keys may be absent.
    var isPartial: Bool { get }

    // Added for the types that moved from the format module (player, input, environment, eq,
    // recorder, output, genericOutput, lv2); the messages are the format's own.

    /// The graph's sample rate (what rate-dependent defaults and ranges use).
    var sampleRate: Double { get }
    /// A number greater than 0.
    func positiveNumber(_ key: String) -> Double?
    /// A number not below 0.
    func nonNegativeNumber(_ key: String) -> Double?
    /// A length in seconds: greater than 0 and at most the format's longest time.
    func duration(_ key: String) -> Double?
    /// A latency in milliseconds: greater than 0 and at most the format's largest latency.
    func latency(_ key: String) -> Double?
    /// A sound file to write (its extension must name a type the writer knows), with its path
    /// resolved against the graph file's folder.
    func fileToWrite(_ key: String) -> (name: String, path: String)?
    /// Whether the value of `key` is a JSON number.
    func isNumber(_ key: String) -> Bool
    /// A number that must be a valid value of the parameter `info` (its range, or 0/1 for a
    /// boolean parameter), reported as a parameter value is.
    func parameterValue(_ key: String, _ info: ParameterInfo) -> Double?
    /// The nested object at `key`, read the same way (its unknown keys and missing `required`
    /// keys reported); nil when absent or not an object (reported).
    func object(_ key: String, allowed: [String], required: [String]) -> (any NodePropertyReader)?
    /// The length of the array at `key`; nil when absent or not an array (reported).
    func count(_ key: String) -> Int?
    /// Element `index` of the array at `key` as an object (see ``object(_:allowed:required:)``).
    func element(_ key: String, _ index: Int, allowed: [String], required: [String]) -> (any NodePropertyReader)?
    /// Reports that this object as a whole is invalid, with `reason` (one line).
    func reportInvalid(_ reason: String)
    /// Reports that the value of `key` goes beyond a limit of the format, with `reason`.
    func reportLimitExceeded(_ key: String, _ reason: String)
    /// An array of integers, each within `range`.
    func integers(_ key: String, in range: ClosedRange<Int>) -> [Int]?
}

extension NodePropertyReader {
    /// A number without a range.
    package func number(_ key: String) -> Double? { number(key, in: nil) }

    /// A file the node cannot do without: ``file(_:)`` (``fileToWrite(_:)`` when `writing`);
    /// when `key` is absent it is reported missing (``reportMissing(_:)``) and nil returned.
    package func requiredFile(_ key: String, writing: Bool = false) -> (name: String, path: String)? {
        guard has(key) else {
            reportMissing(key)
            return nil
        }
        return writing ? fileToWrite(key) : file(key)
    }

    /// Readers that do not read arrays report them as invalid.
    package func integers(_ key: String, in range: ClosedRange<Int>) -> [Int]? {
        if has(key) { reportInvalid(key, "arrays are not read here") }
        return nil
    }
}
