// What a parameter is: its address, unit, range and default (a value, shared by schema and nodes).

/// The unit a parameter's value is expressed in.
public enum ParameterUnit: String, Sendable, Hashable, CaseIterable {
    case generic, hertz, decibels, seconds, percent, linearGain, pan, boolean, meters, degrees
}

/// The scope a parameter or property is addressed in, as in Audio Units.
public enum Scope: String, Sendable, Hashable, CaseIterable {
    /// The node as a whole (element 0).
    case global
    /// One of the node's input buses (the element is the bus index).
    case input
    /// One of the node's output buses (the element is the bus index).
    case output
}

/// A parameter's full address: scope, element and name, with the spec's string form.
///
/// The string form is `name` (global scope, element 0), `input.N.name` / `output.N.name`
/// (input or output scope, element N), or `group.N.name` / `group.name` for a node's own group
/// (`band.0.gain`, `listener.x`), which lives in the global scope.
public struct ParameterAddress: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var scope: Scope
    public var element: Int
    /// The group for node-specific groups (`band`, `listener`), nil otherwise. A group without an
    /// index (`listener.x`) has element -1.
    public var group: String?
    public var name: String

    public init(scope: Scope = .global, element: Int = 0, group: String? = nil, name: String) {
        self.scope = scope
        self.element = element
        self.group = group
        self.name = name
    }

    /// An address written in code (`"input.1.pan"`): a literal that is not of the string form is
    /// a programmer error and stops the program with one line. Text from users goes through
    /// ``init(_:)``, which returns nil instead.
    public init(stringLiteral value: String) {
        guard let address = ParameterAddress(value) else {
            preconditionFailure("\"\(value)\" is not a parameter address (name, input.N.name, output.N.name, group.N.name)")
        }
        self = address
    }

    /// Parses the spec's string form; nil when it is not of that form.
    public init?(_ string: String) {
        let parts = string.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !parts.contains(where: \.isEmpty) else { return nil }
        switch parts.count {
        case 1:
            self.init(name: parts[0])
        case 2:
            guard parts[0] != "input", parts[0] != "output" else { return nil }
            self.init(scope: .global, element: -1, group: parts[0], name: parts[1])
        case 3:
            guard let index = Int(parts[1]), index >= 0, String(index) == parts[1] else { return nil }
            switch parts[0] {
            case "input": self.init(scope: .input, element: index, name: parts[2])
            case "output": self.init(scope: .output, element: index, name: parts[2])
            default: self.init(scope: .global, element: index, group: parts[0], name: parts[2])
            }
        default:
            return nil
        }
    }

    public var description: String {
        switch scope {
        case .input: return "input.\(element).\(name)"
        case .output: return "output.\(element).\(name)"
        case .global:
            guard let group else { return name }
            // `listener.x` has a group and no index; `band.0.gain` has both.
            return element < 0 ? "\(group).\(name)" : "\(group).\(element).\(name)"
        }
    }
}

/// The static description of one parameter: range, unit and default value.
public struct ParameterInfo: Hashable, Sendable {
    public var address: ParameterAddress
    public var unit: ParameterUnit
    public var minValue: Double
    public var maxValue: Double
    public var defaultValue: Double
    /// Whether a step change may glide internally (filters, delay time) rather than jump.
    public var smoothsSteps: Bool

    public init(address: ParameterAddress, unit: ParameterUnit, minValue: Double, maxValue: Double,
                defaultValue: Double, smoothsSteps: Bool = false) {
        self.address = address
        self.unit = unit
        self.minValue = minValue
        self.maxValue = maxValue
        self.defaultValue = defaultValue
        self.smoothsSteps = smoothsSteps
    }

    /// Whether `value` lies inside the range (inclusive). NaN is never inside.
    public func contains(_ value: Double) -> Bool { value >= minValue && value <= maxValue }

    /// `value` clamped to the range, as an Audio Unit clamps a parameter value set out of range
    /// (infinities become the bounds). NaN stays NaN: callers that take values from applications
    /// ignore it.
    public func clamped(_ value: Double) -> Double { value.isNaN ? value : min(max(value, minValue), maxValue) }

    /// The range as the spec writes it: `-100...100`.
    public var rangeDescription: String { "\(Self.format(minValue))...\(Self.format(maxValue))" }

    /// A number without a trailing `.0`.
    public static func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
