// Second-order section coefficients from the Audio EQ Cookbook (R. Bristow-Johnson), in Double.

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Normalised biquad coefficients (`a0 == 1`):
/// `H(z) = (b0 + b1 z^-1 + b2 z^-2) / (1 + a1 z^-1 + a2 z^-2)`.
///
/// Thread safety: a value type; ``cookbook(type:frequency:gain:q:sampleRate:)`` is real-time
/// safe (pure arithmetic).
package struct BiquadCoefficients: Sendable, Hashable {
    package var b0: Double
    package var b1: Double
    package var b2: Double
    package var a1: Double
    package var a2: Double

    /// Coefficients already normalised so that a0 == 1.
    package init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        self.b0 = b0; self.b1 = b1; self.b2 = b2; self.a1 = a1; self.a2 = a2
    }

    /// The identity (passes the input unchanged).
    package static let identity = BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    /// The Audio EQ Cookbook coefficients with `alpha = sin(w0)/(2q)` for every type (shelves
    /// included), `A = 10^(gain/40)`, `w0 = 2*pi*frequency/sampleRate`; `gain` is ignored by the
    /// pass and notch types; `bandPass` is the constant-0-dB-peak-gain form.
    ///
    /// At `frequency <= 0` and `frequency >= sampleRate/2` the result is the exact limit filter of
    /// the Web Audio API's BiquadFilterNode (https://www.w3.org/TR/webaudio/#BiquadFilterNode, as
    /// its reference implementation computes it): a constant gain, see ``limit(type:atNyquist:gain:)``.
    /// `q` is clamped to at least 1e-6 so that the result is always a stable filter. Real-time safe.
    @inline(__always)
    package static func cookbook(type: EQFilterType, frequency: Double, gain: Double, q: Double,
                                sampleRate: Double) -> BiquadCoefficients {
        let A = pow(10, gain / 40)
        if !(frequency > 0) || frequency >= sampleRate / 2 {
            return limit(type: type, atNyquist: frequency >= sampleRate / 2, gain: gain)
        }
        let w0 = 2 * Double.pi * frequency / sampleRate
        let cw = cos(w0), sw = sin(w0)
        let alpha = sw / (2 * max(q, 1e-6))
        let b0, b1, b2, a0, a1, a2: Double
        switch type {
        case .peak:
            b0 = 1 + alpha * A; b1 = -2 * cw; b2 = 1 - alpha * A
            a0 = 1 + alpha / A; a1 = -2 * cw; a2 = 1 - alpha / A
        case .lowShelf:
            let sa = 2 * A.squareRoot() * alpha
            b0 = A * ((A + 1) - (A - 1) * cw + sa)
            b1 = 2 * A * ((A - 1) - (A + 1) * cw)
            b2 = A * ((A + 1) - (A - 1) * cw - sa)
            a0 = (A + 1) + (A - 1) * cw + sa
            a1 = -2 * ((A - 1) + (A + 1) * cw)
            a2 = (A + 1) + (A - 1) * cw - sa
        case .highShelf:
            let sa = 2 * A.squareRoot() * alpha
            b0 = A * ((A + 1) + (A - 1) * cw + sa)
            b1 = -2 * A * ((A - 1) + (A + 1) * cw)
            b2 = A * ((A + 1) + (A - 1) * cw - sa)
            a0 = (A + 1) - (A - 1) * cw + sa
            a1 = 2 * ((A - 1) - (A + 1) * cw)
            a2 = (A + 1) - (A - 1) * cw - sa
        case .lowPass:
            b0 = (1 - cw) / 2; b1 = 1 - cw; b2 = (1 - cw) / 2
            a0 = 1 + alpha; a1 = -2 * cw; a2 = 1 - alpha
        case .highPass:
            b0 = (1 + cw) / 2; b1 = -(1 + cw); b2 = (1 + cw) / 2
            a0 = 1 + alpha; a1 = -2 * cw; a2 = 1 - alpha
        case .bandPass:
            b0 = alpha; b1 = 0; b2 = -alpha
            a0 = 1 + alpha; a1 = -2 * cw; a2 = 1 - alpha
        case .notch:
            b0 = 1; b1 = -2 * cw; b2 = 1
            a0 = 1 + alpha; a1 = -2 * cw; a2 = 1 - alpha
        case .allPass:
            b0 = 1 - alpha; b1 = -2 * cw; b2 = 1 + alpha
            a0 = 1 + alpha; a1 = -2 * cw; a2 = 1 - alpha
        }
        let inv = 1 / a0
        return BiquadCoefficients(b0: b0 * inv, b1: b1 * inv, b2: b2 * inv, a1: a1 * inv, a2: a2 * inv)
    }

    /// The constant-gain filter a band of `type` becomes at frequency 0 (`atNyquist` false) or at
    /// `sampleRate/2` (`atNyquist` true), with `A = 10^(gain/40)`:
    ///
    /// | type | at 0 | at sampleRate/2 |
    /// |---|---|---|
    /// | lowPass | 0 | 1 |
    /// | highPass | 1 | 0 |
    /// | lowShelf | 1 | A² |
    /// | highShelf | A² | 1 |
    /// | bandPass | 0 | 0 |
    /// | peak, notch, allPass | 1 | 1 |
    ///
    /// These are the limits of the cookbook formulas (the shelves' gain moves wholly inside or
    /// outside the band) and what the Web Audio BiquadFilterNode renders there. Real-time safe.
    @inline(__always)
    package static func limit(type: EQFilterType, atNyquist: Bool, gain: Double) -> BiquadCoefficients {
        let a2 = pow(10, gain / 20)
        let g: Double
        switch type {
        case .lowPass: g = atNyquist ? 1 : 0
        case .highPass: g = atNyquist ? 0 : 1
        case .lowShelf: g = atNyquist ? a2 : 1
        case .highShelf: g = atNyquist ? 1 : a2
        case .bandPass: g = 0
        case .peak, .notch, .allPass: g = 1
        }
        return BiquadCoefficients(b0: g, b1: 0, b2: 0, a1: 0, a2: 0)
    }

    /// The cookbook coefficients of `band` (its `bypass` flag is not considered).
    package static func cookbook(_ band: EQBand, sampleRate: Double) -> BiquadCoefficients {
        cookbook(type: band.type, frequency: band.frequency, gain: band.gain, q: band.q, sampleRate: sampleRate)
    }

    /// `|H(e^jw)|` at `frequency` Hz (for displays and tests).
    package func magnitude(atFrequency frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        let c1 = cos(w), s1 = sin(w), c2 = cos(2 * w), s2 = sin(2 * w)
        let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
        let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
        return ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot()
    }
}
