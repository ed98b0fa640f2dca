// The Web Audio PannerNode's azimuth/elevation algorithm, equal-power panning and sound cone.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Web Audio API's PannerNode geometry and equal-power panning, exactly as specified:
/// https://www.w3.org/TR/webaudio/#azimuth-elevation,
/// https://www.w3.org/TR/webaudio/#Spatialization-equal-power-panning and
/// https://www.w3.org/TR/webaudio/#Spatialization-sound-cones.
///
/// Thread safety: a namespace of pure functions; all are real-time safe.
package enum WebAudioPanning {
    /// Azimuth and elevation (degrees) of `source` as heard by a listener at `listenerPosition`
    /// facing `forward` with `up` the top of the head. Azimuth is 0 ahead, +90 to the right,
    /// -90 to the left, ±180 behind; elevation is +90 straight up. A source at the listener's
    /// position gives (0, 0).
    @inlinable
    package static func azimuthElevation(source: Vector3, listenerPosition: Vector3,
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
    package static func equalPowerGains(azimuth: Double) -> (left: Double, right: Double) {
        let x = (frontAzimuth(azimuth) + 90) / 180
        return (cos(x * Double.pi / 2), sin(x * Double.pi / 2))
    }

    /// The azimuth folded into the front half-plane, `-90...90` (-135 behaves as -45), after
    /// clamping to `-180...180`, as the equal-power algorithm does first.
    @inlinable
    package static func frontAzimuth(_ azimuth: Double) -> Double {
        let a = max(-180, min(180, azimuth))
        if a < -90 { return -180 - a }
        if a > 90 { return 180 - a }
        return a
    }

    /// The equal-power panning of a stereo input at `azimuth` degrees as a 2×2 matrix:
    /// `outL = inL·leftFromLeft + inR·leftFromRight`, `outR = inL·rightFromLeft + inR·rightFromRight`.
    ///
    /// The spec's law, with the azimuth folded to the front: for `azimuth <= 0`,
    /// `x = (azimuth + 90) / 90`, `outL = inL + inR·cos(x·π/2)`, `outR = inR·sin(x·π/2)`; otherwise
    /// `x = azimuth / 90`, `outL = inL·cos(x·π/2)`, `outR = inR + inL·sin(x·π/2)`. Ahead passes
    /// the input (nearly) unchanged; hard left sends both channels left.
    @inlinable
    package static func equalPowerStereoMatrix(azimuth: Double)
        -> (leftFromLeft: Double, leftFromRight: Double, rightFromLeft: Double, rightFromRight: Double) {
        let a = frontAzimuth(azimuth)
        if a <= 0 {
            let x = (a + 90) / 90
            return (1, cos(x * Double.pi / 2), 0, sin(x * Double.pi / 2))
        }
        let x = a / 90
        return (cos(x * Double.pi / 2), 0, sin(x * Double.pi / 2), 1)
    }

    /// The PannerNode's cone gain: 1 when `orientation` is the zero vector or both angles are
    /// 360; otherwise, with `angle` the angle in degrees between `orientation` and the direction
    /// from the source to the listener, 1 inside `coneInnerAngle/2`, `coneOuterGain` outside
    /// `coneOuterAngle/2`, and linear between them. A listener at the source's position is at 90°.
    @inlinable
    package static func coneGain(sourcePosition: Vector3, orientation: Vector3, listenerPosition: Vector3,
                                coneInnerAngle: Double, coneOuterAngle: Double, coneOuterGain: Double) -> Double {
        if orientation == .zero || (coneInnerAngle == 360 && coneOuterAngle == 360) { return 1 }
        let sourceToListener = (listenerPosition - sourcePosition).normalized
        let angle = 180 * acos(clampUnit(sourceToListener.dot(orientation.normalized))) / Double.pi
        let absAngle = abs(angle)
        let absInner = abs(coneInnerAngle) / 2
        let absOuter = abs(coneOuterAngle) / 2
        if absAngle <= absInner { return 1 }
        if absAngle >= absOuter { return coneOuterGain }
        let x = (absAngle - absInner) / (absOuter - absInner)
        return (1 - x) + coneOuterGain * x
    }

    @inlinable
    static func clampUnit(_ v: Double) -> Double { max(-1, min(1, v)) }
}
