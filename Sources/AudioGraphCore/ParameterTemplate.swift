// One entry of a node type's parameter table: name, element, unit and range.

/// One parameter of a node type, for global, per-input, per-band or listener parameters, with
/// ranges that may depend on the sample rate (resolved by ``info(element:sampleRate:)``).
///
/// Thread safety: a value type; safe to share between threads.
package struct ParameterTemplate: Sendable {
    /// Which element the parameter belongs to.
    package enum Element: Sendable, Equatable { case global, perInput, perBand, listener }
    /// Its element.
    package var element: Element
    /// Its name (the last component of its address).
    package var name: String
    /// Its unit.
    package var unit: ParameterUnit
    /// Its smallest value.
    package var minimum: Bound
    /// Its largest value.
    package var maximum: Bound
    /// Its default value.
    package var defaultValue: Bound
    /// Whether the engine smooths its steps.
    package var smoothsSteps: Bool = false

    /// A number, or a fraction of the sample rate capped by a constant.
    package enum Bound: Sendable {
        case value(Double)
        case nyquist
        case nyquistCapped(Double)

        /// The value at `sampleRate`.
        package func resolve(sampleRate: Double) -> Double {
            switch self {
            case .value(let value): return value
            case .nyquist: return sampleRate / 2
            case .nyquistCapped(let cap): return min(cap, sampleRate / 2)
            }
        }
    }

    /// A template with bounds that may depend on the sample rate.
    package init(_ element: Element, _ name: String, _ unit: ParameterUnit, _ minimum: Bound, _ maximum: Bound, _ defaultValue: Bound,
         smooths: Bool = false) {
        self.element = element
        self.name = name
        self.unit = unit
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
        self.smoothsSteps = smooths
    }

    /// A template with constant bounds.
    package init(_ element: Element, _ name: String, _ unit: ParameterUnit, _ minimum: Double, _ maximum: Double, _ defaultValue: Double,
         smooths: Bool = false) {
        self.init(element, name, unit, .value(minimum), .value(maximum), .value(defaultValue), smooths: smooths)
    }

    /// Its address on element `index` (ignored for global and listener parameters).
    package func address(element index: Int) -> ParameterAddress {
        switch element {
        case .global: return ParameterAddress(name: name)
        case .perInput: return ParameterAddress(scope: .input, element: index, name: name)
        case .perBand: return ParameterAddress(scope: .global, element: index, group: "band", name: name)
        case .listener: return ParameterAddress(scope: .global, element: -1, group: "listener", name: name)
        }
    }

    /// Its description on element `index` with ranges at `sampleRate`.
    package func info(element index: Int, sampleRate: Double) -> ParameterInfo {
        ParameterInfo(address: address(element: index), unit: unit, minValue: minimum.resolve(sampleRate: sampleRate),
                      maxValue: maximum.resolve(sampleRate: sampleRate), defaultValue: defaultValue.resolve(sampleRate: sampleRate),
                      smoothsSteps: smoothsSteps)
    }
}
