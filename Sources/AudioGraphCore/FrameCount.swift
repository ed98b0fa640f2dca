// Converting seconds-times-rate products to frame counts without trapping on huge or odd values.

/// Frame arithmetic shared by the nodes, the renderer and the automation: a `Double` number of
/// frames (seconds times a rate) becomes an integer count that saturates instead of trapping.
///
/// `Int64(x)` traps when `x` is NaN, infinite or beyond ±2^63; graph files can hold times such as
/// `1e300` s. The graph-file loader rejects such times (`GraphDescription.maximumTime`), and every
/// conversion site goes through here as well, so an engine built directly (without the loader)
/// cannot trap either.
///
/// Thread safety: pure functions; real-time safe (no allocation, no locks).
package enum FrameCount {
    /// `x` rounded by `rule` and clamped to `Int64`'s range; NaN gives 0.
    @inline(__always)
    package static func int64(_ x: Double, rounding rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> Int64 {
        let r = x.rounded(rule)
        if r.isNaN { return 0 }
        // 2^63 is exactly representable; anything at or beyond it saturates.
        if r >= 9_223_372_036_854_775_808.0 { return .max }
        if r <= -9_223_372_036_854_775_808.0 { return .min }
        return Int64(r)
    }

    /// `seconds * sampleRate` rounded to the nearest frame, saturating.
    @inline(__always)
    package static func frames(seconds: Double, sampleRate: Double,
                              rounding rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> Int64 {
        int64(seconds * sampleRate, rounding: rule)
    }

    /// `x` rounded by `rule` and clamped to `Int`'s range; NaN gives 0.
    @inline(__always)
    package static func int(_ x: Double, rounding rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> Int {
        Int(int64(x, rounding: rule))
    }
}
