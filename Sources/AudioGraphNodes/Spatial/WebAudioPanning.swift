// The Web Audio PannerNode's azimuth/elevation algorithm and its equal-power panning of a mono input.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Web Audio API's PannerNode geometry and equal-power panning, exactly as specified:
/// https://www.w3.org/TR/webaudio/#azimuth-elevation and
/// https://www.w3.org/TR/webaudio/#Spatialization-equal-power-panning.
///
/// Thread safety: a namespace of pure functions; all are real-time safe.
public enum WebAudioPanning {
    /// Azimuth and elevation (degrees) of `source` as heard by a listener at `listenerPosition`
    /// facing `forward` with `up` the top of the head. Azimuth is 0 ahead, +90 to the right,
    /// -90 to the left, ±180 behind; elevation is +90 straight up. A source at the listener's
    /// position gives (0, 0).
    @inlinable
    public static func azimuthElevation(source: Vector3, listenerPosition: Vector3,
                                        forward: Vector3, up: Vector3) -> (azimuth: Double, elevation: Double) {
        var sourceListener = source - listenerPosition
        if sourceListener == .zero { return (0, 0) }
        sourceListener = sourceListener.normalized
        let listenerRight = forward.cross(up).normalized
        let listenerForward = forward.normalized
        let upVector = listenerRight.cross(listenerForward)
        let upProjection = sourceListener.dot(upVector)
        let projected = (sourceListener - upVector * upProjection).normalized
        var azimuth = 180 * acos(clampUnit(projected.dot(listenerRight))) / Double.pi
        let frontBack = projected.dot(listenerForward)
        if frontBack < 0 { azimuth = 360 - azimuth }
        if azimuth >= 0 && azimuth <= 270 {
            azimuth = 90 - azimuth
        } else {
            azimuth = 450 - azimuth
        }
        var elevation = 90 - 180 * acos(clampUnit(sourceListener.dot(upVector))) / Double.pi
        if elevation > 90 {
            elevation = 180 - elevation
        } else if elevation < -90 {
            elevation = -180 - elevation
        }
        return (azimuth, elevation)
    }

    /// Equal-power gains of a mono input at `azimuth` degrees: the rear half-plane folds to the
    /// front (-135 behaves as -45), `x = (azimuth + 90) / 180`, `left = cos(x·π/2)`,
    /// `right = sin(x·π/2)`. Ahead gives 0.70710678 on each side.
    @inlinable
    public static func equalPowerGains(azimuth: Double) -> (left: Double, right: Double) {
        var a = max(-180, min(180, azimuth))
        if a < -90 {
            a = -180 - a
        } else if a > 90 {
            a = 180 - a
        }
        let x = (a + 90) / 180
        return (cos(x * Double.pi / 2), sin(x * Double.pi / 2))
    }

    @inlinable
    static func clampUnit(_ v: Double) -> Double { max(-1, min(1, v)) }
}
