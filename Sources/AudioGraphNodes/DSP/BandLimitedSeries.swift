// The Fourier partial sums of the unit square/sawtooth/triangle waves, in SIMD lanes, two samples at a time.
import AudioGraphCore
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The band-limited square, sawtooth and triangle waves: their Fourier series summed up to the
/// Nyquist frequency (at most ``maximumHarmonics`` harmonics), for one sample or two at a time.
///
/// Every wave is written as `scale * sum_{t < M} w[t] * sin(theta + t * delta)`, with
/// `theta = 2*pi*phase`:
/// - sawtooth: `w[t] = (-1)^t / (t+1)`, `delta = theta`, `M = K`, `scale = 2/pi`;
/// - square: `w[t] = 1 / (2t+1)`, `delta = 2*theta` (odd harmonics), `M = (K+1)/2`, `scale = 4/pi`;
/// - triangle: `w[t] = (-1)^t / (2t+1)^2`, `delta = 2*theta`, `M = (K+1)/2`, `scale = 8/pi^2`;
///
/// where `K = min(512, floor((sampleRate/2) / frequency))`. The weights are precomputed tables
/// (no division per harmonic). The sum runs in ``laneCount`` (4) lanes per sample: lane `j`
/// holds the terms `j + 4m`, `m = 0, 1, ...`, a trigonometric sum with angle step `4 * delta`
/// that Clenshaw's recurrence evaluates from the last block down with one multiply and two adds
/// per term. Two samples share one `SIMD8<Double>` (``valuePair(_:_:_:sampleRate:)``), so eight
/// independent chains run instead of the previous kernel's one (which rotated a phasor harmonic
/// by harmonic and divided by k), and one sample's setup overlaps the other's. Blocks past a
/// sample's last term are masked with exact zeros, so a sample's value never depends on its
/// partner (checked bit for bit in the tests). The chains are at most 128 steps long: the result
/// is within about 2e-13 of the series summed term by term with libm's sine (see
/// `BandLimitedSeriesTests`; the requirement is 1e-9). `sin`/`cos` of theta come from
/// ``sinCos(cycles:)`` (within 1e-15 of libm's).
///
/// Thread safety: immutable; the tables of ``shared`` are built once (when the first oscillator
/// kernel is created) and only read afterwards, so ``value(_:phase:frequency:sampleRate:)`` may
/// run on any thread and is real-time safe (no allocation, locks or I/O).
struct BandLimitedSeries: @unchecked Sendable {
    /// The most harmonics any wave sums.
    static let maximumHarmonics = 512
    /// Harmonics of one sample evaluated side by side.
    static let laneCount = 4

    /// Two samples' lanes: the low half is the first sample's, the high half the second's.
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

    private init() {
        sawtoothWeights = Self.table { t in (t % 2 == 0 ? 1.0 : -1.0) / Double(t + 1) }
        squareWeights = Self.table { t in 1.0 / Double(2 * t + 1) }
        triangleWeights = Self.table { t in
            let k = Double(2 * t + 1)
            return (t % 2 == 0 ? 1.0 : -1.0) / (k * k)
        }
    }

    private static func table(_ weight: (Int) -> Double) -> UnsafePointer<Double> {
        let count = maximumHarmonics + laneCount
        let p = UnsafeMutablePointer<Double>.allocate(capacity: count)
        for t in 0..<count { p[t] = t < maximumHarmonics ? weight(t) : 0 }
        return UnsafePointer(p)
    }

    /// The unit wave at `phase` (cycles, in [0, 1)) for a fundamental of `frequency` Hz at
    /// `sampleRate`; 0 for other waveforms, a frequency <= 0 or one above Nyquist. Real-time safe.
    /// The same as either half of ``valuePair(_:_:_:sampleRate:)``, bit for bit.
    @inline(__always)
    func value(_ waveform: Waveform, phase: Double, frequency: Double, sampleRate: Double) -> Double {
        valuePair(waveform, (phase, frequency), (phase, frequency), sampleRate: sampleRate).0
    }

    /// Two samples of the unit wave, each `(phase, frequency)` as in
    /// ``value(_:phase:frequency:sampleRate:)``, evaluated side by side (the lanes of one sample do
    /// not depend on the other's, so each result is bit-identical to evaluating it alone; two
    /// samples keep twice as many independent chains busy). Real-time safe.
    @inline(__always)
    func valuePair(_ waveform: Waveform, _ a: (phase: Double, frequency: Double), _ b: (phase: Double, frequency: Double),
                   sampleRate: Double) -> (Double, Double) {
        let weights: UnsafePointer<Double>, scale: Double, odd: Bool
        switch waveform {
        case .sawtooth: weights = sawtoothWeights; scale = 2 / Double.pi; odd = false
        case .square: weights = squareWeights; scale = 4 / Double.pi; odd = true
        case .triangle: weights = triangleWeights; scale = 8 / (Double.pi * Double.pi); odd = true
        default: return (0, 0)
        }
        let termsA = Self.terms(frequency: a.frequency, sampleRate: sampleRate, odd: odd)
        let termsB = Self.terms(frequency: b.frequency, sampleRate: sampleRate, odd: odd)
        if termsA == 0 && termsB == 0 { return (0, 0) }
        let la = Self.lanes(phase: a.phase, odd: odd)
        let lb = Self.lanes(phase: b.phase, odd: odd)
        let s = Lanes(lowHalf: la.sin, highHalf: lb.sin), c = Lanes(lowHalf: la.cos, highHalf: lb.cos)
        let stepSin = Lanes(lowHalf: .init(repeating: la.stepSin), highHalf: .init(repeating: lb.stepSin))
        let stepCos = Lanes(lowHalf: .init(repeating: la.stepCos), highHalf: .init(repeating: lb.stepCos))
        let twoCos = 2 * stepCos
        // Clenshaw's recurrence per lane, from the last block down: b_m = w_m + 2 cos(step) b_(m+1) - b_(m+2).
        // Blocks past a sample's last term get weight 0, which keeps its lanes at exactly 0 until
        // its own terms start: the same values as starting there.
        let fewer = min(termsA, termsB)
        var t = (max(termsA, termsB) - 1) / Self.laneCount * Self.laneCount
        var b1 = Lanes(repeating: 0), b2 = Lanes(repeating: 0)
        let termLimit = Lanes(lowHalf: .init(repeating: Double(termsA)), highHalf: .init(repeating: Double(termsB)))
        while t + Self.laneCount > fewer {
            let index = Lanes(0, 1, 2, 3, 0, 1, 2, 3) + Lanes(repeating: Double(t))
            let w = Self.load(weights + t).replacing(with: 0, where: index .>= termLimit)
            let next = (w - b2) + twoCos * b1
            b2 = b1
            b1 = next
            if t == 0 { break }
            t -= Self.laneCount
        }
        if t + Self.laneCount <= fewer {
            while true {
                let next = (Self.load(weights + t) - b2) + twoCos * b1
                b2 = b1
                b1 = next
                if t == 0 { break }
                t -= Self.laneCount
            }
        }
        // Lane j sums to sin(beta_j) b_0 + sin(step - beta_j) b_1, beta_j = theta + j delta.
        let lanes = s * b1 + (stepSin * c - stepCos * s) * b2
        // A sample without terms is +0 whatever its lanes' zeros are signed (as when evaluated alone).
        return (termsA == 0 ? 0 : scale * lanes.lowHalf.sum(), termsB == 0 ? 0 : scale * lanes.highHalf.sum())
    }

    /// Terms of the series below Nyquist: harmonics 1...K (K <= 512), odd ones only if `odd`.
    @inline(__always)
    private static func terms(frequency: Double, sampleRate: Double, odd: Bool) -> Int {
        guard frequency > 0 else { return 0 }
        let ratio = (sampleRate / 2) / frequency
        let harmonics = ratio >= Double(maximumHarmonics) ? maximumHarmonics : Int(ratio)
        return odd ? (harmonics + 1) / 2 : harmonics
    }

    /// One sample's lanes: lane j at e^(i (theta + j delta)) for j = 0...3, and the lane step
    /// e^(i 4 delta); delta = theta, or 2 theta for the odd harmonics.
    @inline(__always)
    private static func lanes(phase: Double, odd: Bool) -> (sin: SIMD4<Double>, cos: SIMD4<Double>, stepSin: Double, stepCos: Double) {
        let (s1, c1) = sinCos(cycles: phase)
        let sd = odd ? 2 * s1 * c1 : s1, cd = odd ? c1 * c1 - s1 * s1 : c1
        let s2 = 2 * sd * cd, c2 = cd * cd - sd * sd
        let s4 = 2 * s2 * c2, c4 = c2 * c2 - s2 * s2
        let sa = s1 * cd + c1 * sd, ca = c1 * cd - s1 * sd
        let sb = s1 * c2 + c1 * s2, cb = c1 * c2 - s1 * s2
        let sc = sa * c2 + ca * s2, cc = ca * c2 - sa * s2
        return (SIMD4(s1, sa, sb, sc), SIMD4(c1, ca, cb, cc), s4, c4)
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
        let w = UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Double>.self)
        return Lanes(lowHalf: w, highHalf: w)
    }
}
