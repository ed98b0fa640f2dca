// The Web Audio PannerNode distance models: how a source's gain falls with its distance.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A distance model with its parameters, evaluated as the Web Audio API's PannerNode defines it
/// (the render-side twin of the graph description's `DistanceModel` value)
/// (https://www.w3.org/TR/webaudio/#dom-distancemodeltype).
///
/// With `d` the source-listener distance, `ref` the reference distance, `max` the maximum
/// distance and `r` the rolloff factor:
/// - `inverse`: `ref / (ref + r * (max(d, ref) - ref))`
/// - `linear`: `1 - r' * (d' - ref') / (max' - ref')` with `ref' = min(ref, max)`,
///   `max' = max(ref, max)`, `d'` = d clamped to `ref'...max'` and `r'` = r clamped to 0...1;
///   `1 - r'` when `ref' == max'`
/// - `exponential`: `(max(d, ref) / ref) ^ -r`
/// - `none`: 1
///
/// Thread safety: a value type; `gain(distance:)` is pure and real-time safe.
public struct DistanceAttenuation: Hashable, Sendable {
    /// Which formula applies.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case inverse, linear, exponential, none
    }

    public var kind: Kind
    public var referenceDistance: Double
    public var maxDistance: Double
    public var rolloffFactor: Double

    /// The graph format's defaults: inverse, reference 1 m, maximum 10000 m, rolloff 1.
    public init(kind: Kind = .inverse, referenceDistance: Double = 1, maxDistance: Double = 10000,
                rolloffFactor: Double = 1) {
        self.kind = kind
        self.referenceDistance = referenceDistance
        self.maxDistance = maxDistance
        self.rolloffFactor = rolloffFactor
    }

    /// The linear gain at `distance` metres.
    @inlinable
    public func gain(distance: Double) -> Double {
        switch kind {
        case .none:
            return 1
        case .linear:
            let ref = min(referenceDistance, maxDistance)
            let maxD = max(referenceDistance, maxDistance)
            let d = max(min(distance, maxD), ref)
            let r = max(min(rolloffFactor, 1), 0)
            if ref == maxD { return 1 - r }
            return 1 - r * (d - ref) / (maxD - ref)
        case .inverse:
            let ref = referenceDistance
            return ref / (ref + rolloffFactor * (max(distance, ref) - ref))
        case .exponential:
            let ref = referenceDistance
            return pow(max(distance, ref) / ref, -rolloffFactor)
        }
    }
}
