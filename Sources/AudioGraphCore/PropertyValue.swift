// Reading numbers out of `any Sendable` property values whatever Swift type the caller used.

/// Converts the loosely typed values of `GraphNode.setProperty(_:_:)` to numbers, so that
/// `setProperty("startTime", 1)` (an `Int` literal) means what `setProperty("startTime", 1.0)` means.
package enum PropertyValue {
    /// The value as a `Double`: any floating-point or integer type; nil for anything else.
    package static func double(_ value: any Sendable) -> Double? {
        switch value {
        case let v as Double: return v
        case let v as Float: return Double(v)
        case let v as any BinaryInteger: return Double(v)
        case let v as any BinaryFloatingPoint: return Double(v)
        default: return nil
        }
    }

    /// The value as an `Int`: any integer type that fits, or a floating-point value that is a
    /// whole number in range; nil for anything else.
    package static func int(_ value: any Sendable) -> Int? {
        switch value {
        case let v as Int: return v
        case let v as any BinaryInteger: return Int(exactly: v)
        default:
            guard let d = double(value), d.isFinite, d.rounded() == d else { return nil }
            return Int(exactly: d)
        }
    }

    /// An optional number: nil (`Optional.none` of any wrapped type) gives `.some(nil)`; a number
    /// gives `.some(value)`; anything else gives nil.
    package static func optionalDouble(_ value: any Sendable) -> Double?? {
        if let d = double(value) { return .some(d) }
        if let o = value as? any OptionalProtocol, o.isNone { return .some(nil) }
        return nil
    }
}

/// Lets `PropertyValue` recognise a nil of any wrapped type (internal: no member added to the
/// user's Optionals).
protocol OptionalProtocol {
    /// Whether this is `.none`.
    var isNone: Bool { get }
}

extension Optional: OptionalProtocol {
    var isNone: Bool { self == nil }
}
