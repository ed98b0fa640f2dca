// Occlusion and obstruction of an environment source: an attenuation plus a one-pole low-pass.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The muffling of a source behind an obstacle, as an attenuation in dB (-100...0) turned into
/// a gain plus a one-pole low-pass whose cutoff falls with the attenuation.
///
/// The mapping (the project's own, documented here and in the environment's docs):
/// - gain `g = 10^(dB/20)`;
/// - cutoff `fc = 20000 Hz · 10^(dB/20)`, at least 20 Hz: -6 dB ≈ 10 kHz, -20 dB = 2 kHz,
///   -40 dB = 200 Hz, -60 dB and below = 20 Hz;
/// - the low-pass is `s[n] = s[n-1] + a·(g·u[n] - s[n-1])` with `a = 1 - exp(-2π·fc/sampleRate)`
///   (the delay node's filter), and exactly 0 dB is the identity (no filter, gain 1), so an
///   unobstructed source is not coloured at all. A cutoff at or above sampleRate/2 is also the
///   identity filter.
///
/// How the environment uses it, as in AVAudio3DMixing:
/// - **occlusion** (the source is in another room, behind a wall: both the direct sound and its
///   reverberation are muffled) applies to the direct path and to the reverb send;
/// - **obstruction** (something stands between source and listener in the same room: the direct
///   sound is muffled, the room's reflections are not) applies to the direct path only.
/// The direct path therefore uses `directAttenuation(occlusion:obstruction:)` = occlusion +
/// obstruction dB (at least -100), the reverb send `reverbAttenuation(occlusion:obstruction:)` =
/// occlusion dB.
///
/// Thread safety: a value type owned by the render thread; `setAttenuation` and `process` are
/// real-time safe (no allocation, no locks).
package struct OcclusionFilter: Sendable {
    /// The frequency of the cutoff at 0 dB (the start of the mapping).
    package static let topCutoff = 20000.0
    /// The lowest cutoff.
    package static let bottomCutoff = 20.0

    // MARK: Render thread only
    package private(set) var attenuation: Double = 0
    package private(set) var gain: Float = 1
    /// The low-pass coefficient `a`; 1 is the identity.
    package private(set) var coefficient: Float = 1
    private var state: Float = 0
    private let sampleRate: Double

    package init(sampleRate: Double) {
        self.sampleRate = sampleRate
    }

    /// The low-pass cutoff (Hz) for an attenuation in dB; infinity for 0 dB (no filter).
    @inlinable
    package static func cutoff(attenuation dB: Double) -> Double {
        if dB >= 0 { return .infinity }
        return max(bottomCutoff, topCutoff * pow(10, dB / 20))
    }

    /// The direct path's attenuation: occlusion plus obstruction, floored at -100 dB.
    @inlinable
    package static func directAttenuation(occlusion: Double, obstruction: Double) -> Double {
        max(-100, min(0, occlusion) + min(0, obstruction))
    }

    /// The reverb send's attenuation: the occlusion alone.
    @inlinable
    package static func reverbAttenuation(occlusion: Double, obstruction: Double) -> Double {
        max(-100, min(0, occlusion))
    }

    /// Sets the attenuation in dB (clamped to -100...0). Cheap when the value is unchanged.
    @inline(__always)
    package mutating func setAttenuation(_ dB: Double) {
        let v = max(-100, min(0, dB))
        if v == attenuation { return }
        attenuation = v
        gain = Float(pow(10, v / 20))
        let fc = Self.cutoff(attenuation: v)
        coefficient = fc >= sampleRate / 2 ? 1 : Float(1 - exp(-2 * Double.pi * fc / sampleRate))
    }

    /// Filters one sample.
    @inline(__always)
    package mutating func process(_ x: Float) -> Float {
        let u = gain * x
        if coefficient == 1 {
            state = u
            return u
        }
        state += coefficient * (u - state)
        // A decayed tail is flushed to exact zero (far below audibility, above denormals), so a
        // silent source comes to rest and can be skipped.
        if abs(state) < 1e-30 { state = 0 }
        return state
    }

    /// Clears the low-pass memory when it is NaN or infinite (a non-finite input sample), so the
    /// bad value goes no further than the slice that carried it (call once per slice). Real-time safe.
    @inline(__always)
    package mutating func clearNonFiniteState() {
        if !state.isFinite { state = 0 }
    }

    /// Whether the filter passes its input unchanged (0 dB: gain 1, no low-pass).
    @inlinable package var isIdentity: Bool { coefficient == 1 && gain == 1 }

    /// Whether the filter's memory is exactly zero (zero in gives zero out).
    package var isAtRest: Bool { state == 0 }

    /// Forgets the filter's memory.
    package mutating func reset() { state = 0 }
}
