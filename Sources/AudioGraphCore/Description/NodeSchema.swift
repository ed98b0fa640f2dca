// The single source of truth per node type: kind, buses, property keys and parameter table.

/// How many buses a node type has on one side.
public struct BusCountRule: Sendable, Hashable {
    /// The count when the file does not say (`inputBusCount` default).
    public var defaultCount: Int
    /// The smallest count.
    public var minimum: Int
    /// The largest count.
    public var maximum: Int
    /// Whether the file may choose it (`inputBusCount` of mixer and environment).
    public var isVariable: Bool { minimum != maximum }

    /// A fixed count.
    public static func fixed(_ count: Int) -> BusCountRule { BusCountRule(defaultCount: count, minimum: count, maximum: count) }
}

/// The parameter template of a node type: one entry per name, for global, per-input or per-band
/// parameters. Ranges that depend on the sample rate are computed by ``NodeSchema/parameterInfo(for:sampleRate:inputBusCount:bandCount:)``.
struct ParameterTemplate: Sendable {
    enum Element: Sendable { case global, perInput, perBand, listener }
    var element: Element
    var name: String
    var unit: ParameterUnit
    var minimum: Bound
    var maximum: Bound
    var defaultValue: Bound
    var smoothsSteps: Bool = false

    /// A number, or a fraction of the sample rate capped by a constant.
    enum Bound: Sendable {
        case value(Double)
        case nyquist
        case nyquistCapped(Double)

        func resolve(sampleRate: Double) -> Double {
            switch self {
            case .value(let value): return value
            case .nyquist: return sampleRate / 2
            case .nyquistCapped(let cap): return min(cap, sampleRate / 2)
            }
        }
    }

    init(_ element: Element, _ name: String, _ unit: ParameterUnit, _ minimum: Bound, _ maximum: Bound, _ defaultValue: Bound,
         smooths: Bool = false) {
        self.element = element
        self.name = name
        self.unit = unit
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
        self.smoothsSteps = smooths
    }

    init(_ element: Element, _ name: String, _ unit: ParameterUnit, _ minimum: Double, _ maximum: Double, _ defaultValue: Double,
         smooths: Bool = false) {
        self.init(element, name, unit, .value(minimum), .value(maximum), .value(defaultValue), smooths: smooths)
    }

    func address(element index: Int) -> ParameterAddress {
        switch element {
        case .global: return ParameterAddress(name: name)
        case .perInput: return ParameterAddress(scope: .input, element: index, name: name)
        case .perBand: return ParameterAddress(scope: .global, element: index, group: "band", name: name)
        case .listener: return ParameterAddress(scope: .global, element: -1, group: "listener", name: name)
        }
    }

    func info(element index: Int, sampleRate: Double) -> ParameterInfo {
        ParameterInfo(address: address(element: index), unit: unit, minValue: minimum.resolve(sampleRate: sampleRate),
                      maxValue: maximum.resolve(sampleRate: sampleRate), defaultValue: defaultValue.resolve(sampleRate: sampleRate),
                      smoothsSteps: smoothsSteps)
    }
}

/// What the format says about one node type: its kind, buses, property keys and parameters.
///
/// The engine's node classes create their parameters from ``parameterInfos(sampleRate:inputBusCount:bandCount:)``
/// so that the loader and the engine agree on every range and default.
///
/// Thread safety: immutable; safe to share between threads.
public struct NodeSchema: Sendable {
    /// The node type.
    public let type: NodeType
    /// Its kind.
    public let kind: NodeKind
    /// Input buses.
    public let inputBuses: BusCountRule
    /// Output bus count (0 for output nodes).
    public let outputBusCount: Int
    /// The keys its `properties` object may have.
    public let propertyKeys: [String]
    /// The properties a `setProperty` update may change while the graph runs.
    public let runtimePropertyKeys: [String]
    /// Whether each input bus may arrive at any rate and channel count (converter, mixer,
    /// environment, genericOutput convert; the others need their own rate).
    public let convertsInputs: Bool
    let templates: [ParameterTemplate]

    /// The largest `inputBusCount` of a mixer.
    public static let maximumMixerInputs = 1024
    /// The largest `inputBusCount` of an environment.
    public static let maximumEnvironmentInputs = 1024

    /// The schema of `type`.
    public static func `for`(_ type: NodeType) -> NodeSchema {
        switch type {
        case .oscillator: return oscillator
        case .player: return player
        case .input: return input
        case .mixer: return mixer
        case .environment: return environment
        case .eq: return eq
        case .delay: return delay
        case .recorder: return recorder
        case .converter: return converter
        case .output: return output
        case .genericOutput: return genericOutput
        case .analyser: return analyser
        case .lv2: return lv2
        case .timePitch: return timePitch
        case .reverb: return reverb
        case .varispeed: return varispeed
        }
    }

    /// The parameter at `address` for a node with `inputBusCount` inputs and `bandCount` eq bands,
    /// with ranges at `sampleRate`; nil when the node has no such parameter.
    public func parameterInfo(for address: ParameterAddress, sampleRate: Double, inputBusCount: Int,
                              bandCount: Int) -> ParameterInfo? {
        for template in templates where template.name == address.name {
            switch template.element {
            case .global:
                if address.scope == .global, address.group == nil { return template.info(element: 0, sampleRate: sampleRate) }
            case .perInput:
                if address.scope == .input, address.element >= 0, address.element < inputBusCount {
                    return template.info(element: address.element, sampleRate: sampleRate)
                }
            case .perBand:
                if address.scope == .global, address.group == "band", address.element >= 0, address.element < bandCount {
                    return template.info(element: address.element, sampleRate: sampleRate)
                }
            case .listener:
                if address.scope == .global, address.group == "listener", address.element < 0 {
                    return template.info(element: -1, sampleRate: sampleRate)
                }
            }
        }
        return nil
    }

    /// Every parameter of a node with `inputBusCount` inputs and `bandCount` eq bands: the
    /// global ones, then per input bus, then per band.
    public func parameterInfos(sampleRate: Double, inputBusCount: Int, bandCount: Int) -> [ParameterInfo] {
        var infos: [ParameterInfo] = []
        for template in templates where template.element == .global || template.element == .listener {
            infos.append(template.info(element: template.element == .listener ? -1 : 0, sampleRate: sampleRate))
        }
        for index in 0..<max(0, inputBusCount) {
            for template in templates where template.element == .perInput {
                infos.append(template.info(element: index, sampleRate: sampleRate))
            }
        }
        for index in 0..<max(0, bandCount) {
            for template in templates where template.element == .perBand {
                infos.append(template.info(element: index, sampleRate: sampleRate))
            }
        }
        return infos
    }

    /// Why `address` is not a parameter of such a node (for error messages).
    func explainUnknown(_ address: ParameterAddress, inputBusCount: Int, bandCount: Int) -> String {
        let matching = templates.filter { $0.name == address.name }
        if let perInput = matching.first(where: { $0.element == .perInput }), address.scope == .input {
            return "this \(type.rawValue) node has \(inputBusCount) input bus\(inputBusCount == 1 ? "" : "es")"
                + " (input.0 to input.\(inputBusCount - 1)); raise inputBusCount for input.\(address.element).\(perInput.name)"
        }
        if matching.contains(where: { $0.element == .perBand }), address.group == "band" {
            return "the eq has \(bandCount) band\(bandCount == 1 ? "" : "s")"
        }
        let names = parameterNames
        if names.isEmpty { return "a \(type.rawValue) node has no parameters" }
        return "\(article) \(type.rawValue) node has \(names.joined(separator: ", "))"
    }

    var article: String { "aeiou".contains(type.rawValue.first ?? "x") ? "an" : "a" }

    /// The parameter names in the spec's notation (`input.N.volume`, `band.N.gain`, `listener.x`).
    public var parameterNames: [String] {
        templates.map { template in
            switch template.element {
            case .global: return template.name
            case .perInput: return "input.N.\(template.name)"
            case .perBand: return "band.N.\(template.name)"
            case .listener: return "listener.\(template.name)"
            }
        }
    }
}

extension ParameterTemplate.Element: Equatable {}

extension NodeSchema {
    static let oscillator = NodeSchema(
        type: .oscillator, kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["waveform", "channels", "seed", "startTime", "stopTime"],
        runtimePropertyKeys: ["waveform", "startTime", "stopTime"], convertsInputs: false,
        templates: [
            ParameterTemplate(.global, "frequency", .hertz, .value(0), .nyquist, .value(440)),
            ParameterTemplate(.global, "amplitude", .linearGain, 0, 1, 1),
        ])

    static let player = NodeSchema(
        type: .player, kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["file", "loop", "startTime", "segment"],
        runtimePropertyKeys: ["loop", "startTime", "segment"], convertsInputs: false,
        templates: [ParameterTemplate(.global, "volume", .linearGain, 0, 1, 1)])

    static let input = NodeSchema(
        type: .input, kind: .source, inputBuses: .fixed(0), outputBusCount: 1,
        propertyKeys: ["device", "channels", "latency", "channelMap"], runtimePropertyKeys: [], convertsInputs: false, templates: [])

    static let mixer = NodeSchema(
        type: .mixer, kind: .mixer,
        inputBuses: BusCountRule(defaultCount: 1, minimum: 1, maximum: maximumMixerInputs), outputBusCount: 1,
        propertyKeys: ["channels"], runtimePropertyKeys: [], convertsInputs: true,
        templates: [
            ParameterTemplate(.global, "volume", .linearGain, 0, 4, 1),
            ParameterTemplate(.perInput, "volume", .linearGain, 0, 4, 1),
            ParameterTemplate(.perInput, "pan", .pan, -1, 1, 0),
            ParameterTemplate(.perInput, "enable", .boolean, 0, 1, 1),
        ])

    static let environment = NodeSchema(
        type: .environment, kind: .mixer,
        inputBuses: BusCountRule(defaultCount: 1, minimum: 1, maximum: maximumEnvironmentInputs), outputBusCount: 1,
        propertyKeys: ["distanceModel", "renderingAlgorithm", "hrtf", "reverb", "channels"],
        runtimePropertyKeys: ["distanceModel", "reverb"], convertsInputs: true,
        templates: [
            ParameterTemplate(.listener, "x", .meters, -1e6, 1e6, 0),
            ParameterTemplate(.listener, "y", .meters, -1e6, 1e6, 0),
            ParameterTemplate(.listener, "z", .meters, -1e6, 1e6, 0),
            ParameterTemplate(.listener, "yaw", .degrees, -180, 180, 0),
            ParameterTemplate(.listener, "pitch", .degrees, -180, 180, 0),
            ParameterTemplate(.listener, "roll", .degrees, -180, 180, 0),
            ParameterTemplate(.listener, "forwardX", .generic, -1e6, 1e6, 0),
            ParameterTemplate(.listener, "forwardY", .generic, -1e6, 1e6, 0),
            ParameterTemplate(.listener, "forwardZ", .generic, -1e6, 1e6, -1),
            ParameterTemplate(.listener, "upX", .generic, -1e6, 1e6, 0),
            ParameterTemplate(.listener, "upY", .generic, -1e6, 1e6, 1),
            ParameterTemplate(.listener, "upZ", .generic, -1e6, 1e6, 0),
            ParameterTemplate(.perInput, "x", .meters, -1e6, 1e6, 0),
            ParameterTemplate(.perInput, "y", .meters, -1e6, 1e6, 0),
            ParameterTemplate(.perInput, "z", .meters, -1e6, 1e6, 0),
            ParameterTemplate(.perInput, "gain", .linearGain, 0, 4, 1),
            ParameterTemplate(.perInput, "occlusion", .decibels, -100, 0, 0),
            ParameterTemplate(.perInput, "obstruction", .decibels, -100, 0, 0),
            ParameterTemplate(.perInput, "reverbBlend", .generic, 0, 1, 0),
            ParameterTemplate(.perInput, "orientationX", .generic, -1e6, 1e6, 1),
            ParameterTemplate(.perInput, "orientationY", .generic, -1e6, 1e6, 0),
            ParameterTemplate(.perInput, "orientationZ", .generic, -1e6, 1e6, 0),
            ParameterTemplate(.perInput, "coneInnerAngle", .degrees, 0, 360, 360),
            ParameterTemplate(.perInput, "coneOuterAngle", .degrees, 0, 360, 360),
            ParameterTemplate(.perInput, "coneOuterGain", .linearGain, 0, 1, 0),
        ])

    static let eq = NodeSchema(
        type: .eq, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["bands", "preset"], runtimePropertyKeys: [], convertsInputs: false,
        templates: [
            ParameterTemplate(.global, "globalGain", .decibels, -96, 24, 0),
            ParameterTemplate(.perBand, "frequency", .hertz, .value(10), .nyquist, .nyquistCapped(1000), smooths: true),
            ParameterTemplate(.perBand, "gain", .decibels, -96, 24, 0, smooths: true),
            ParameterTemplate(.perBand, "q", .generic, 0.05, 100, 0.70710678, smooths: true),
            ParameterTemplate(.perBand, "bypass", .boolean, 0, 1, 0),
        ])

    static let delay = NodeSchema(
        type: .delay, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: [], runtimePropertyKeys: [], convertsInputs: false,
        templates: [
            ParameterTemplate(.global, "delayTime", .seconds, 0, 2, 1, smooths: true),
            ParameterTemplate(.global, "feedback", .percent, -100, 100, 50),
            ParameterTemplate(.global, "lowPassCutoff", .hertz, .value(10), .nyquist, .nyquistCapped(15000), smooths: true),
            ParameterTemplate(.global, "wetDryMix", .percent, 0, 100, 100),
        ])

    /// `rate` (playback rate, 1/32...32), `pitch` (cents), `overlap` (analysis windows, read when
    /// the node is set up), `bypass` (0/1, per slice).
    static let timePitch = NodeSchema(
        type: .timePitch, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: [], runtimePropertyKeys: [], convertsInputs: false,
        templates: [
            ParameterTemplate(.global, "rate", .generic, 1.0 / 32, 32, 1),
            ParameterTemplate(.global, "pitch", .generic, -2400, 2400, 0),
            ParameterTemplate(.global, "overlap", .generic, 3, 32, 8),
            ParameterTemplate(.global, "bypass", .boolean, 0, 1, 0),
        ])

    static let recorder = NodeSchema(
        type: .recorder, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["file", "sampleType"], runtimePropertyKeys: [], convertsInputs: false, templates: [])

    static let converter = NodeSchema(
        type: .converter, kind: .converter, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["format", "quality", "channelMap"], runtimePropertyKeys: ["quality"], convertsInputs: true, templates: [])

    static let output = NodeSchema(
        type: .output, kind: .output, inputBuses: .fixed(1), outputBusCount: 0,
        propertyKeys: ["device", "latency", "streamName"], runtimePropertyKeys: [], convertsInputs: false, templates: [])

    static let genericOutput = NodeSchema(
        type: .genericOutput, kind: .output, inputBuses: .fixed(1), outputBusCount: 0,
        propertyKeys: ["format"], runtimePropertyKeys: [], convertsInputs: true, templates: [])

    /// The plugin's parameters come from the catalogue (``LV2Properties/parameters``), not templates.
    static let lv2 = NodeSchema(
        type: .lv2, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["plugin"], runtimePropertyKeys: [], convertsInputs: false, templates: [])

    static let analyser = NodeSchema(
        type: .analyser, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["fftSize", "smoothingTimeConstant", "minDecibels", "maxDecibels"], runtimePropertyKeys: [],
        convertsInputs: false, templates: [])

    static let reverb = NodeSchema(
        type: .reverb, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: ["preset"], runtimePropertyKeys: [], convertsInputs: false,
        templates: [
            ParameterTemplate(.global, "wetDryMix", .percent, 0, 100, 50),
            ParameterTemplate(.global, "bypass", .boolean, 0, 1, 0),
        ])

    static let varispeed = NodeSchema(
        type: .varispeed, kind: .effect, inputBuses: .fixed(1), outputBusCount: 1,
        propertyKeys: [], runtimePropertyKeys: [], convertsInputs: false,
        templates: [
            ParameterTemplate(.global, "rate", .generic, 0.25, 4, 1),
            ParameterTemplate(.global, "bypass", .boolean, 0, 1, 0),
        ])
}
