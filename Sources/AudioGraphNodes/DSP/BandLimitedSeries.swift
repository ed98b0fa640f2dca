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
/// (no division per harmonic). The sum runs in ``laneCount`` lanes: lane `j` holds the terms
/// `j + m * laneCount`, `m = 0, 1, ...`, a trigonometric sum with angle step `laneCount * delta`
/// that Clenshaw's recurrence evaluates from the last block down with one multiply and two adds
/// per term; the eight lanes are independent chains instead of one long one (the previous kernel
/// rotated one phasor harmonic by harmonic and divided by k). The last, partial block is masked
/// with exact 0/1 weights and the lanes are summed at the end. The chains are at most 64 steps
/// long, so rounding stays small: the result is within about 2e-13 of the series summed term by
/// term with libm's sine (see `BandLimitedSeriesTests`; the requirement is 1e-9). `sin`/`cos`
/// of theta come from ``sinCos(cycles:)`` (within 1e-15 of libm's).
///
/// Thread safety: immutable; the tables of ``shared`` are built once (when the first oscillator
/// kernel is created) and only read afterwards, so ``value(_:phase:frequency:sampleRate:)`` may
/// run on any thread and is real-time safe (no allocation, locks or I/O).
struct BandLimitedSeries: @unchecked Sendable {
    /// The most harmonics any wave sums.
    static let maximumHarmonics = 512
    /// Harmonics evaluated side by side.
    static let laneCount = 8

    typealias Lanes = SIMD8<Double>

    /// The tables, built on first use: ``OscillatorKernel`` takes them when it is created, on the
    /// control thread, so the render thread never builds them (nor pays a lazy-global check).
    static let shared = BandLimitedSeries()

    // MARK: Immutable after init (built once, never freed)
    /// The weights, `maximumHarmonics + laneCount` entries each (the tail is zeros, read by the
    /// masked last block only).
    private let sawtoothWeights: UnsafePointer<Double>
    private let squareWeights: UnsafePointer<Double>
    private let triangleWeights: UnsafePointer<Double>
    /// `tailMasks[r]`: 1 in the first `r` lanes, 0 in the others (r = 0...laneCount).
    private let tailMasks: UnsafePointer<Lanes>

    private init() {
        sawtoothWeights = Self.table { t in (t % 2 == 0 ? 1.0 : -1.0) / Double(t + 1) }
        squareWeights = Self.table { t in 1.0 / Double(2 * t + 1) }
        triangleWeights = Self.table { t in
            let k = Double(2 * t + 1)
            return (t % 2 == 0 ? 1.0 : -1.0) / (k * k)
        }
        let masks = UnsafeMutablePointer<Lanes>.allocate(capacity: Self.laneCount + 1)
        for r in 0...Self.laneCount {
            var v = Lanes(repeating: 0)
            for j in 0..<r { v[j] = 1 }
            masks[r] = v
        }
        tailMasks = UnsafePointer(masks)
    }

    private static func table(_ weight: (Int) -> Double) -> UnsafePointer<Double> {
        let count = maximumHarmonics + laneCount
        let p = UnsafeMutablePointer<Double>.allocate(capacity: count)
        for t in 0..<count { p[t] = t < maximumHarmonics ? weight(t) : 0 }
        return UnsafePointer(p)
    }

    /// The unit wave at `phase` (cycles, in [0, 1)) for a fundamental of `frequency` Hz at
    /// `sampleRate`; 0 for other waveforms, a frequency <= 0 or one above Nyquist. Real-time safe.
    @inline(__always)
    func value(_ waveform: Waveform, phase: Double, frequency: Double, sampleRate: Double) -> Double {
        guard frequency > 0 else { return 0 }
        let harmonics = min(Self.maximumHarmonics, Int((sampleRate / 2) / frequency))
        if harmonics < 1 { return 0 }
        let (s1, c1) = Self.sinCos(cycles: phase)
        switch waveform {
        case .sawtooth:
            return 2 / Double.pi * sum(sawtoothWeights, terms: harmonics, sinTheta: s1, cosTheta: c1,
                                       sinDelta: s1, cosDelta: c1)
        case .square:
            return 4 / Double.pi * sum(squareWeights, terms: (harmonics + 1) / 2, sinTheta: s1, cosTheta: c1,
                                       sinDelta: 2 * s1 * c1, cosDelta: c1 * c1 - s1 * s1)
        case .triangle:
            return 8 / (Double.pi * Double.pi) * sum(triangleWeights, terms: (harmonics + 1) / 2,
                                                     sinTheta: s1, cosTheta: c1,
                                                     sinDelta: 2 * s1 * c1, cosDelta: c1 * c1 - s1 * s1)
        default:
            return 0
        }
    }

    /// `sum_{t < terms} w[t] * sin(theta + t * delta)`, given the sines and cosines of theta and delta.
    @inline(__always)
    private func sum(_ w: UnsafePointer<Double>, terms: Int, sinTheta s1: Double, cosTheta c1: Double,
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
        let s = Lanes(lowHalf: lowSin, highHalf: highSin)
        let c = Lanes(lowHalf: lowCos, highHalf: highCos)
        // Clenshaw's recurrence per lane, from the last block down: b_m = w_m + 2 cos(8 delta) b_(m+1) - b_(m+2).
        var t = (terms - 1) / Self.laneCount * Self.laneCount
        var b1 = Self.load(w + t) * tailMasks[terms - t]
        var b2 = Lanes(repeating: 0)
        let twoCos = Lanes(repeating: 2 * c8)
        while t > 0 {
            t -= Self.laneCount
            let b = (Self.load(w + t) - b2) + twoCos * b1
            b2 = b1
            b1 = b
        }
        // Lane j sums to sin(beta_j) b_0 + sin(8 delta - beta_j) b_1, beta_j = theta + j delta.
        return (s * b1 + (s8 * c - c8 * s) * b2).sum()
    }

    /// `(sin(2*pi*x), cos(2*pi*x))` for x in [0, 1], within 1e-15 of libm's (a phase in cycles
    /// needs no libm range reduction, and one call gives both): the quarter turn is split off
    /// exactly (x - q/4 is exact for these x), leaving |angle| <= pi/4 for the Taylor
    /// polynomials (to x^15 and x^16; the first omitted terms are below 5e-17).
    @inline(__always)
    static func sinCos(cycles x: Double) -> (sin: Double, cos: Double) {
        // Round to the nearest integer by the 1.5 * 2^52 trick: rounded() calls libm's round()
        // on the baseline x86-64 target (no SSE4.1 roundsd).
        let magic = 6_755_399_441_055_744.0
        let quarter = (x * 4 + magic) - magic
        let a = (x - quarter * 0.25) * (2 * Double.pi)
        let a2 = a * a
        // Estrin's scheme (pairs of coefficients, then powers of a^2) for a short dependency chain.
        let a4 = a2 * a2, a8 = a4 * a4
        let s01 = -1.0 / 6 + a2 * (1.0 / 120), s23 = -1.0 / 5040 + a2 * (1.0 / 362_880)
        let s45 = -1.0 / 39_916_800 + a2 * (1.0 / 6_227_020_800), s6 = -1.0 / 1_307_674_368_000
        let s = a + (a * a2) * ((s01 + a4 * s23) + a8 * (s45 + a4 * s6))
        let c01 = -0.5 + a2 * (1.0 / 24), c23 = -1.0 / 720 + a2 * (1.0 / 40320)
        let c45 = -1.0 / 3_628_800 + a2 * (1.0 / 479_001_600), c67 = -1.0 / 87_178_291_200 + a2 * (1.0 / 20_922_789_888_000)
        let c = 1 + a2 * ((c01 + a4 * c23) + a8 * (c45 + a4 * c67))
        switch Int(quarter) & 3 {
        case 0: return (s, c)
        case 1: return (c, -s)
        case 2: return (-s, -c)
        default: return (-c, s)
        }
    }

    @inline(__always)
    private static func load(_ p: UnsafePointer<Double>) -> Lanes {
        UnsafeRawPointer(p).loadUnaligned(as: Lanes.self)
    }
}
