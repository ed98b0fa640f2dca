// The Fourier partial sums of the unit square/sawtooth/triangle waves, eight harmonics at a time.
import AudioGraphCore
import Foundation

/// The band-limited square, sawtooth and triangle waves: their Fourier series summed up to the
/// Nyquist frequency (at most ``maximumHarmonics`` harmonics), evaluated one sample at a time.
///
/// Every wave is written as `scale * sum_{t < M} w[t] * sin(theta + t * delta)`, with
/// `theta = 2*pi*phase`:
/// - sawtooth: `w[t] = (-1)^t / (t+1)`, `delta = theta`, `M = K`, `scale = 2/pi`;
/// - square: `w[t] = 1 / (2t+1)`, `delta = 2*theta` (odd harmonics), `M = (K+1)/2`, `scale = 4/pi`;
/// - triangle: `w[t] = (-1)^t / (2t+1)^2`, `delta = 2*theta`, `M = (K+1)/2`, `scale = 8/pi^2`;
///
/// where `K = min(512, floor((sampleRate/2) / frequency))`. The weights are precomputed tables
/// (no division per harmonic). The sum runs in ``laneCount`` lanes: lane `j` holds term
/// `j + m * laneCount` as a unit phasor `(cos, sin)` that is rotated by `laneCount * delta` per
/// step, so the eight rotations are independent chains instead of one long one; the last, partial
/// block is masked with exact 0/1 weights and the lanes are summed at the end. Rotation keeps the
/// rounding error growing linearly with the number of steps (at most 64): the result differs
/// from the directly summed series by about 1e-13 (see `BandLimitedSeriesTests`).
///
/// Thread safety: stateless; the tables are built once (``prepare()``, called when an oscillator
/// kernel is created) and only read afterwards, so ``value(_:phase:frequency:sampleRate:)`` may
/// run on any thread and is real-time safe (no allocation, locks or I/O).
enum BandLimitedSeries {
    /// The most harmonics any wave sums.
    static let maximumHarmonics = 512
    /// Harmonics evaluated side by side.
    static let laneCount = 8

    typealias Lanes = SIMD8<Double>

    /// The weight tables, `maximumHarmonics + laneCount` entries each (the tail is zeros, read by
    /// the masked last block only). Built once, never freed; immutable after initialization.
    nonisolated(unsafe) private static let sawtoothWeights = table { t in (t % 2 == 0 ? 1.0 : -1.0) / Double(t + 1) }
    nonisolated(unsafe) private static let squareWeights = table { t in 1.0 / Double(2 * t + 1) }
    nonisolated(unsafe) private static let triangleWeights = table { t in
        let k = Double(2 * t + 1)
        return (t % 2 == 0 ? 1.0 : -1.0) / (k * k)
    }
    /// `tailMasks[r]`: 1 in the first `r` lanes, 0 in the others (r = 0...laneCount).
    nonisolated(unsafe) private static let tailMasks: UnsafeMutablePointer<Lanes> = {
        let p = UnsafeMutablePointer<Lanes>.allocate(capacity: laneCount + 1)
        for r in 0...laneCount {
            var v = Lanes(repeating: 0)
            for j in 0..<r { v[j] = 1 }
            p[r] = v
        }
        return p
    }()

    private static func table(_ weight: (Int) -> Double) -> UnsafeMutablePointer<Double> {
        let count = maximumHarmonics + laneCount
        let p = UnsafeMutablePointer<Double>.allocate(capacity: count)
        for t in 0..<count { p[t] = t < maximumHarmonics ? weight(t) : 0 }
        return p
    }

    /// Builds the tables now (they are lazily initialized globals); call off the render thread,
    /// before the first ``value(_:phase:frequency:sampleRate:)``, so that never allocates.
    static func prepare() {
        _ = sawtoothWeights
        _ = squareWeights
        _ = triangleWeights
        _ = tailMasks
    }

    /// The unit wave at `phase` (cycles, in [0, 1)) for a fundamental of `frequency` Hz at
    /// `sampleRate`; 0 for other waveforms, a frequency <= 0 or one above Nyquist. Real-time safe.
    @inline(__always)
    static func value(_ waveform: Waveform, phase: Double, frequency: Double, sampleRate: Double) -> Double {
        guard frequency > 0 else { return 0 }
        let harmonics = min(maximumHarmonics, Int((sampleRate / 2) / frequency))
        if harmonics < 1 { return 0 }
        let theta = 2 * Double.pi * phase
        let s1 = sin(theta), c1 = cos(theta)
        switch waveform {
        case .sawtooth:
            return 2 / Double.pi * sum(UnsafePointer(sawtoothWeights), terms: harmonics, sinTheta: s1, cosTheta: c1,
                                       sinDelta: s1, cosDelta: c1)
        case .square:
            return 4 / Double.pi * sum(UnsafePointer(squareWeights), terms: (harmonics + 1) / 2, sinTheta: s1, cosTheta: c1,
                                       sinDelta: 2 * s1 * c1, cosDelta: c1 * c1 - s1 * s1)
        case .triangle:
            return 8 / (Double.pi * Double.pi) * sum(UnsafePointer(triangleWeights), terms: (harmonics + 1) / 2,
                                                     sinTheta: s1, cosTheta: c1,
                                                     sinDelta: 2 * s1 * c1, cosDelta: c1 * c1 - s1 * s1)
        default:
            return 0
        }
    }

    /// `sum_{t < terms} w[t] * sin(theta + t * delta)`, given the sines and cosines of theta and delta.
    @inline(__always)
    private static func sum(_ w: UnsafePointer<Double>, terms: Int, sinTheta s1: Double, cosTheta c1: Double,
                            sinDelta sd: Double, cosDelta cd: Double) -> Double {
        // Powers of e^(i delta) by squaring: delta, 2 delta, 4 delta, 8 delta (the lane step).
        let s2 = 2 * sd * cd, c2 = cd * cd - sd * sd
        let s4 = 2 * s2 * c2, c4 = c2 * c2 - s2 * s2
        let s8 = 2 * s4 * c4, c8 = c4 * c4 - s4 * s4
        // Lane j starts at e^(i (theta + j delta)): lanes 0...3 from theta, 4...7 rotated by 4 delta.
        let sa = s1 * cd + c1 * sd, ca = c1 * cd - s1 * sd
        let sb = s1 * c2 + c1 * s2, cb = c1 * c2 - s1 * s2
        let sc = sa * c2 + ca * s2, cc = ca * c2 - sa * s2
        let lowSin = SIMD4(s1, sa, sb, sc), lowCos = SIMD4(c1, ca, cb, cc)
        let highSin = lowSin * c4 + lowCos * s4, highCos = lowCos * c4 - lowSin * s4
        var s = Lanes(lowHalf: lowSin, highHalf: highSin)
        var c = Lanes(lowHalf: lowCos, highHalf: highCos)
        var acc = Lanes(repeating: 0)
        var t = 0
        while t + laneCount <= terms {
            acc += load(w + t) * s
            let rotated = s * c8 + c * s8
            c = c * c8 - s * s8
            s = rotated
            t += laneCount
        }
        if t < terms { acc += load(w + t) * tailMasks[terms - t] * s }
        return acc.sum()
    }

    @inline(__always)
    private static func load(_ p: UnsafePointer<Double>) -> Lanes {
        UnsafeRawPointer(p).loadUnaligned(as: Lanes.self)
    }
}
