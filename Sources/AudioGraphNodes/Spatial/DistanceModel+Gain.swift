// The Web Audio PannerNode distance models evaluated: how a source's gain falls with its distance.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The graph description's `DistanceModel` evaluated as the Web Audio API's PannerNode defines it
/// (https://www.w3.org/TR/webaudio/#dom-distancemodeltype).
///
/// With `d` the source-listener distance, `ref` the reference distance, `max` the maximum
/// distance and `r` the rolloff factor:
/// - `inverse`: `ref / (ref + r * (max(d, ref) - ref))`
/// - `linear`: `1 - r' * (d' - ref') / (max' - ref')` with `ref' = min(ref, max)`,
///   `max' = max(ref, max)`, `d'` = d clamped to `ref'...max'` and `r'` = r clamped to 0...1;
///   `1 - r'` when `ref' == max'`
/// - `exponential`: `(max(d, ref) / ref) ^ -r`
/// - inverse and exponential at 0/0 (ref = 0 with d = 0, or no rolloff): 0
/// - `none`: 1
///
/// Thread safety: a value type; `gain(distance:)` is pure and real-time safe.
extension DistanceModel {
    /// The linear gain at `distance` metres.
    @inlinable
    public func gain(distance: Double) -> Double {
        switch model {
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
            // A reference distance of 0 with the source at 0 (or no rolloff) is 0/0: taken to be 0,
            // as the Web Audio spec says for dref = d' = 0.
            let ref = referenceDistance
            let denominator = ref + rolloffFactor * (max(distance, ref) - ref)
            return denominator > 0 ? ref / denominator : 0
        case .exponential:
            let ref = referenceDistance
            let g = pow(max(distance, ref) / ref, -rolloffFactor)
            return g.isNaN ? 0 : g
        }
    }
}
