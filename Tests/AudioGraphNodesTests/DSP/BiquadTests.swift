// Tests of Biquad, BiquadCoefficients and EQBand against the Audio EQ Cookbook written out here.

import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class BiquadTests: XCTestCase {
    let sr = 48000.0

    /// The cookbook (RBJ) written out independently: (b0, b1, b2, a0, a1, a2), not normalised.
    func cookbook(_ type: EQFilterType, f0: Double, gainDB: Double, q: Double) -> [Double] {
        let w0 = 2 * Double.pi * f0 / sr
        let alpha = sin(w0) / (2 * q)
        let A = pow(10, gainDB / 40)
        let c = cos(w0)
        switch type {
        case .peak: return [1 + alpha * A, -2 * c, 1 - alpha * A, 1 + alpha / A, -2 * c, 1 - alpha / A]
        case .lowShelf:
            let s = 2 * sqrt(A) * alpha
            return [A * ((A + 1) - (A - 1) * c + s), 2 * A * ((A - 1) - (A + 1) * c), A * ((A + 1) - (A - 1) * c - s),
                    (A + 1) + (A - 1) * c + s, -2 * ((A - 1) + (A + 1) * c), (A + 1) + (A - 1) * c - s]
        case .highShelf:
            let s = 2 * sqrt(A) * alpha
            return [A * ((A + 1) + (A - 1) * c + s), -2 * A * ((A - 1) + (A + 1) * c), A * ((A + 1) + (A - 1) * c - s),
                    (A + 1) - (A - 1) * c + s, 2 * ((A - 1) - (A + 1) * c), (A + 1) - (A - 1) * c - s]
        case .lowPass: return [(1 - c) / 2, 1 - c, (1 - c) / 2, 1 + alpha, -2 * c, 1 - alpha]
        case .highPass: return [(1 + c) / 2, -(1 + c), (1 + c) / 2, 1 + alpha, -2 * c, 1 - alpha]
        case .bandPass: return [alpha, 0, -alpha, 1 + alpha, -2 * c, 1 - alpha]
        case .notch: return [1, -2 * c, 1, 1 + alpha, -2 * c, 1 - alpha]
        case .allPass: return [1 - alpha, -2 * c, 1 + alpha, 1 + alpha, -2 * c, 1 - alpha]
        }
    }

    /// |H(e^jw)| from un-normalised coefficients, written with complex exponentials.
    func magnitude(_ k: [Double], f: Double) -> Double {
        let w = 2 * Double.pi * f / sr
        func poly(_ c0: Double, _ c1: Double, _ c2: Double) -> (Double, Double) {
            (c0 + c1 * cos(-w) + c2 * cos(-2 * w), c1 * sin(-w) + c2 * sin(-2 * w))
        }
        let (nr, ni) = poly(k[0], k[1], k[2]), (dr, di) = poly(k[3], k[4], k[5])
        return hypot(nr, ni) / hypot(dr, di)
    }

    /// Runs a mono signal through a Biquad in slices, applying `changes` (frame, band) between calls.
    func run(_ x: [Float], band: EQBand, slice: Int, startFrame: Int64 = 0,
             changes: [(Int, EQBand)] = [], channels: Int = 1) -> [[Float]] {
        let bq = Biquad(band: band, sampleRate: sr, maximumChannelCount: channels)
        let n = x.count
        let ins = (0..<channels).map { c -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            for i in 0..<n { p[i] = c == 0 ? x[i] : -0.5 * x[i] }
            return p
        }
        let outs = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: n) }
        defer { ins.forEach { $0.deallocate() }; outs.forEach { $0.deallocate() } }
        var done = 0
        var pending = changes
        while done < n {
            if let first = pending.first, first.0 == done { bq.setTarget(first.1); pending.removeFirst() }
            var c = min(slice, n - done)
            if let first = pending.first { c = min(c, first.0 - done) }
            let ip = ins.map { UnsafePointer($0 + done) }, op = outs.map { $0 + done }
            ip.withUnsafeBufferPointer { ib in op.withUnsafeBufferPointer { ob in
                bq.process(input: ib, output: ob, frameCount: c, startFrame: startFrame + Int64(done))
            } }
            done += c
        }
        return outs.map { Array(UnsafeBufferPointer(start: $0, count: n)) }
    }

    let settings: [(EQFilterType, Double, Double, Double)] = [
        (.peak, 1000, 9, 1.4), (.lowShelf, 300, -7.5, 0.8), (.highShelf, 4000, 6, 0.70710678),
        (.lowPass, 2000, 0, 0.70710678), (.highPass, 500, 0, 2), (.bandPass, 1500, 0, 3),
        (.notch, 3000, 0, 5), (.allPass, 800, 0, 0.9),
    ]
    let probeFrequencies = [60.0, 130, 310, 700, 1100, 1900, 3300, 5600, 9100, 15000]

    func testCoefficientsMatchCookbook() {
        for (type, f, g, q) in settings {
            let k = cookbook(type, f0: f, gainDB: g, q: q)
            let c = BiquadCoefficients.cookbook(type: type, frequency: f, gain: g, q: q, sampleRate: sr)
            let expected = [k[0] / k[3], k[1] / k[3], k[2] / k[3], k[4] / k[3], k[5] / k[3]]
            let got = [c.b0, c.b1, c.b2, c.a1, c.a2]
            for i in 0..<5 { XCTAssertEqual(got[i], expected[i], accuracy: 1e-12, "\(type) coefficient \(i)") }
        }
        // Gain is ignored by pass/notch types.
        XCTAssertEqual(BiquadCoefficients.cookbook(type: .lowPass, frequency: 1000, gain: 12, q: 1, sampleRate: sr),
                       BiquadCoefficients.cookbook(type: .lowPass, frequency: 1000, gain: 0, q: 1, sampleRate: sr))
        XCTAssertEqual(EQBand(type: .peak, frequency: 1).q, 1)
        XCTAssertEqual(EQBand(type: .lowShelf, frequency: 1).q, 0.70710678)
    }

    /// Measures each type's steady-state response to sines at 10 frequencies (least-squares tone
    /// fit) and compares it with |H| from the cookbook within 0.01 dB.
    func testMagnitudeResponseOfEachType() {
        let n = 24000, tail = 12000
        for (type, f, g, q) in settings {
            let k = cookbook(type, f0: f, gainDB: g, q: q)
            let band = EQBand(type: type, frequency: f, gain: g, q: q)
            for probe in probeFrequencies {
                let x = (0..<n).map { Float(0.5 * sin(2 * Double.pi * probe * Double($0) / sr)) }
                let y = run(x, band: band, slice: 512)[0]
                let fit = ToneFit(y[(n - tail)...], sampleRate: sr, frequencies: [probe])
                let inFit = ToneFit(x[(n - tail)...], sampleRate: sr, frequencies: [probe])
                let measured = fit.tones[0].amplitude / inFit.tones[0].amplitude
                let expected = magnitude(k, f: probe)
                if expected > 1e-3 {
                    XCTAssertEqual(SignalMeasurement.dBFS(measured), SignalMeasurement.dBFS(expected), accuracy: 0.01, "\(type) at \(probe) Hz")
                } else {
                    XCTAssertEqual(measured, expected, accuracy: 1e-5, "\(type) at \(probe) Hz")
                }
                XCTAssertEqual(SignalMeasurement.dBFS(BiquadCoefficients.cookbook(band, sampleRate: sr).magnitude(atFrequency: probe, sampleRate: sr)),
                               SignalMeasurement.dBFS(expected), accuracy: 1e-9)
            }
        }
    }

    /// Impulse responses against a Double direct-form-I lfilter written here.
    func testImpulseResponseMatchesDifferenceEquation() {
        for (type, f, g, q) in settings {
            let k = cookbook(type, f0: f, gainDB: g, q: q)
            let b = [k[0] / k[3], k[1] / k[3], k[2] / k[3]], a = [1, k[4] / k[3], k[5] / k[3]]
            let n = 600
            var x = [Double](repeating: 0, count: n); x[0] = 1
            var ref = [Double](repeating: 0, count: n)
            for i in 0..<n {
                var acc = b[0] * x[i]
                if i >= 1 { acc += b[1] * x[i - 1] - a[1] * ref[i - 1] }
                if i >= 2 { acc += b[2] * x[i - 2] - a[2] * ref[i - 2] }
                ref[i] = acc
            }
            let y = run(x.map(Float.init), band: EQBand(type: type, frequency: f, gain: g, q: q), slice: 7, channels: 2)
            for i in 0..<n {
                XCTAssertEqual(Double(y[0][i]), ref[i], accuracy: 1e-6 * max(1, abs(ref[i])), "\(type) sample \(i)")
                XCTAssertEqual(Double(y[1][i]), -0.5 * ref[i], accuracy: 1e-6, "\(type) channel 1 sample \(i)")
            }
        }
    }

    /// Against scipy (vectors generated by Tests/Fixtures-scripts/biquad_reference.py): the
    /// filter's impulse response vs scipy.signal.lfilter, its coefficients' |H| vs freqz.
    func testMatchesScipyReferences() throws {
        XCTAssertEqual(BiquadReferenceVectors.sampleRate, sr)
        XCTAssertEqual(BiquadReferenceVectors.cases.count, 8)
        for ref in BiquadReferenceVectors.cases {
            let type = try XCTUnwrap(EQFilterType(rawValue: ref.type))
            let band = EQBand(type: type, frequency: ref.frequency, gain: ref.gain, q: ref.q)
            var x = [Float](repeating: 0, count: ref.impulse.count); x[0] = 1
            let y = run(x, band: band, slice: 5)[0]
            for i in 0..<ref.impulse.count {
                XCTAssertEqual(Double(y[i]), ref.impulse[i], accuracy: 1e-6 * max(1, abs(ref.impulse[i])), "\(type) sample \(i)")
            }
            let c = BiquadCoefficients.cookbook(band, sampleRate: sr)
            for (f, m) in zip(BiquadReferenceVectors.frequencies, ref.magnitude) {
                XCTAssertEqual(c.magnitude(atFrequency: f, sampleRate: sr), m, accuracy: 1e-9 * max(1, m), "\(type) at \(f) Hz")
            }
        }
    }

    /// A +18 dB gain step on a 1 kHz peak, mid-signal: the largest sample-to-sample change around
    /// the step is no larger than the steady output's own at the new setting.
    func testGainStepDoesNotClick() {
        let n = 48000, change = 24000 + 5
        let x = (0..<n).map { Float(0.05 * sin(2 * Double.pi * 1000 * Double($0) / sr)) }
        let from = EQBand(type: .peak, frequency: 1000, gain: 0, q: 1)
        let to = EQBand(type: .peak, frequency: 1000, gain: 18, q: 1)
        let y = run(x, band: from, slice: 128, changes: [(change, to)])[0]
        func maxStep(_ r: Range<Int>) -> Float { r.map { abs(y[$0] - y[$0 - 1]) }.max()! }
        let around = maxStep((change - 100)..<(change + 2000))
        let steadyAfter = maxStep((n - 4800)..<n)
        XCTAssertLessThanOrEqual(around, steadyAfter * 1.0001)
        // The glide lands: at the end the output is the new setting's steady state (+18 dB).
        let fit = ToneFit(y[(n - 9600)...], sampleRate: sr, frequencies: [1000])
        XCTAssertEqual(SignalMeasurement.dBFS(fit.tones[0].amplitude / 0.05), 18, accuracy: 0.01)
    }

    /// A cutoff step 80 Hz -> 8 kHz on a low-pass carrying a 100 Hz tone: switched instantly it
    /// jumps by ~0.37 (about 50 times the tone's own largest step); the glide keeps every
    /// sample-to-sample change within 10 % of the steady signal's own (the filter's phase shift
    /// moving during the 10 ms glide adds ~5 %).
    func testFrequencyStepDoesNotClick() {
        let n = 24000, change = 12000 + 5
        let x = (0..<n).map { Float(0.5 * sin(2 * Double.pi * 100 * Double($0) / sr)) }
        let y = run(x, band: EQBand(type: .lowPass, frequency: 80), slice: 64,
                    changes: [(change, EQBand(type: .lowPass, frequency: 8000))])[0]
        func maxStep(_ r: Range<Int>) -> Float { r.map { abs(y[$0] - y[$0 - 1]) }.max()! }
        let around = maxStep((change - 100)..<(change + 2000))
        let steady = max(maxStep((change - 4800)..<(change - 10)), maxStep((n - 4800)..<n))
        XCTAssertLessThanOrEqual(around, steady * 1.10, "around the step \(around), steady \(steady)")
    }

    /// Frequency glides land within 10 ms: after that the output equals a filter that was set to
    /// the target from the start (apart from the transient's decay).
    func testGlideLandsWithinTenMilliseconds() {
        let bq = Biquad(band: EQBand(type: .lowPass, frequency: 200), sampleRate: sr, maximumChannelCount: 1)
        bq.setTarget(EQBand(type: .lowPass, frequency: 5000))
        let target = BiquadCoefficients.cookbook(type: .lowPass, frequency: 5000, gain: 0, q: 0.70710678, sampleRate: sr)
        var x: Float = 0, y: Float = 0
        var frame: Int64 = 3
        withUnsafePointer(to: &x) { xp in withUnsafeMutablePointer(to: &y) { yp in
            for _ in 0..<Int(0.01 * sr) + 16 {
                [xp].withUnsafeBufferPointer { ib in [yp].withUnsafeBufferPointer { ob in
                    bq.process(input: ib, output: ob, frameCount: 1, startFrame: frame)
                } }
                frame += 1
            }
        } }
        XCTAssertEqual(bq.coefficients, target)
    }

    func testBitIdenticalForAnySliceSize() {
        var seed: UInt64 = 12345
        let x: [Float] = (0..<20000).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Double(seed >> 11) / Double(1 << 53) - 0.5)
        }
        let start = EQBand(type: .peak, frequency: 500, gain: -6, q: 2)
        let changes: [(Int, EQBand)] = [
            (9001, EQBand(type: .peak, frequency: 4000, gain: 12, q: 0.5)),
            (9200, EQBand(type: .peak, frequency: 3000, gain: 3, q: 0.5)),      // during the glide
            (12000, EQBand(type: .peak, frequency: 3000, gain: 3, q: 0.5, bypass: true)),
            (12100, EQBand(type: .peak, frequency: 3000, gain: 3, q: 0.5)),     // un-bypass mid-fade
        ]
        let reference = run(x, band: start, slice: 1, startFrame: 77, changes: changes, channels: 2)
        for slice in [64, 512, 4096] {
            let y = run(x, band: start, slice: slice, startFrame: 77, changes: changes, channels: 2)
            for c in 0..<2 {
                XCTAssertTrue(zip(reference[c], y[c]).allSatisfy { $0.bitPattern == $1.bitPattern }, "slice \(slice)")
            }
        }
    }

    func testBypassPassesInputAfterFade() {
        let x = (0..<4800).map { Float(0.3 * sin(Double($0) * 0.2)) }
        let b = EQBand(type: .lowPass, frequency: 300)
        var bypassed = b; bypassed.bypass = true
        let y = run(x, band: b, slice: 100, changes: [(1000, bypassed)])[0]
        for i in (1000 + 480)..<4800 { XCTAssertEqual(y[i], x[i]) }
        // And a band that starts bypassed is the identity.
        let y2 = run(x, band: bypassed, slice: 100)[0]
        XCTAssertEqual(y2, x)
    }

    /// At exactly sampleRate/2 and 0 a band is the Web Audio limit filter, a constant gain (lowpass
    /// passes, highpass gives 0, lowshelf A², ...), not a clamped frequency that rings. Checked
    /// against the limit of the cookbook formulas written out above: |H| at a probe frequency of
    /// the band at a frequency a hair from the limit, and the rendered impulse response.
    func testLimitsAtNyquistAndZeroAreConstantGains() {
        let gain = 9.0, q = 0.9
        let aSquared = pow(10, gain / 20)
        for type in EQFilterType.allCases {
            for (edge, near, probe) in [(sr / 2, sr / 2 * (1 - 1e-9), 3000.0), (0, 1e-7, 9000.0)] {
                let c = BiquadCoefficients.cookbook(type: type, frequency: edge, gain: gain, q: q, sampleRate: sr)
                XCTAssertEqual([c.b1, c.b2, c.a1, c.a2], [0, 0, 0, 0], "\(type) at \(edge) Hz is a constant gain")
                let expected = magnitude(cookbook(type, f0: near, gainDB: gain, q: q), f: probe)
                XCTAssertEqual(abs(c.b0), expected, accuracy: 1e-4 * max(1, expected), "\(type) at \(edge) Hz")
                // Rendered: the impulse response is b0 then exact zeros (no ringing).
                var x = [Float](repeating: 0, count: 64); x[0] = 1
                let y = run(x, band: EQBand(type: type, frequency: edge, gain: gain, q: q), slice: 7)[0]
                XCTAssertEqual(y[0], Float(c.b0), "\(type) at \(edge) Hz")
                XCTAssertEqual(y[1...].map { abs($0) }.max(), 0, "\(type) at \(edge) Hz rings")
            }
        }
        XCTAssertEqual(BiquadCoefficients.cookbook(type: .lowShelf, frequency: sr / 2, gain: gain, q: q, sampleRate: sr).b0,
                       aSquared, accuracy: 1e-12)
        XCTAssertEqual(BiquadCoefficients.cookbook(type: .highShelf, frequency: 0, gain: gain, q: q, sampleRate: sr).b0,
                       aSquared, accuracy: 1e-12)
    }

    /// The kernel's recurrence written out once more, scalar, one channel and one section at a
    /// time (how `Biquad` computed before its loops were paired and cascaded): Double transposed
    /// direct form II, states below 1e-200 flushed, Float between sections.
    func scalarCascade(_ x: [Float], _ bands: [EQBand]) -> [Float] {
        var y = x
        for band in bands {
            let k = BiquadCoefficients.cookbook(band, sampleRate: sr)
            var z1 = 0.0, z2 = 0.0
            for i in y.indices {
                let xi = Double(y[i])
                let yi = k.b0 * xi + z1
                z1 = k.b1 * xi - k.a1 * yi + z2
                z2 = k.b2 * xi - k.a2 * yi
                if abs(z1) < 1e-200 { z1 = 0 }
                if abs(z2) < 1e-200 { z2 = 0 }
                y[i] = Float(yi)
            }
        }
        return y
    }

    /// The paired loops (two channels per loop, an odd channel alone) and the frame-by-frame
    /// cascade give exactly the scalar recurrence's samples: vectorising changed no bit.
    func testPairedAndCascadedLoopsMatchTheScalarRecurrenceBitForBit() {
        let all = [EQBand(type: .peak, frequency: 31, gain: 6, q: 1), EQBand(type: .lowShelf, frequency: 200, gain: -4),
                   EQBand(type: .peak, frequency: 1000, gain: -6, q: 1), EQBand(type: .highPass, frequency: 40),
                   EQBand(type: .highShelf, frequency: 8000, gain: 3), EQBand(type: .notch, frequency: 3000, q: 4),
                   EQBand(type: .peak, frequency: 5000, gain: 5, q: 2)]
        // An even and an odd number of sections, two and one, over 3 channels (a pair and an odd
        // one), and B6's ten sections over one and two channels. The slices include fewer frames
        // than sections (frame by frame), as many, and more (the wavefront).
        // Both the Swift loops and, on a machine with AVX2, the AVX2 ones.
        let machine = Biquad.wavefrontAVX2, single = Biquad.singleWavefrontAVX2
        defer { Biquad.wavefrontAVX2 = machine; Biquad.singleWavefrontAVX2 = single }
        for avx2 in machine ? [false, true] : [false] {
            Biquad.wavefrontAVX2 = avx2
            Biquad.singleWavefrontAVX2 = avx2
            for bandCount in [6, 7, 2, 1] { assertCascadeMatchesTheScalarRecurrence(Array(all.prefix(bandCount)), channels: 3) }
            let ten = (0..<10).map { k in EQBand(type: .peak, frequency: 31 * pow(2, Double(k)), gain: k % 2 == 0 ? 6 : -6, q: 1) }
            for channels in [1, 2] { assertCascadeMatchesTheScalarRecurrence(ten, channels: channels) }
            for bandCount in [5, 3] { assertCascadeMatchesTheScalarRecurrence(Array(all.prefix(bandCount)), channels: 1) }
            // A fused chain's long cascades (EQChain: 64 one-band eqs): groups of four sections
            // beyond the registers, partly filled ones, and the wavefront's entry and exit steps.
            for bandCount in [64, 17, 18] {
                let many = (0..<bandCount).map { k in all[k % all.count] }
                assertCascadeMatchesTheScalarRecurrence(many, channels: 1)
            }
            assertCascadeMatchesTheScalarRecurrence((0..<19).map { k in all[k % all.count] }, channels: 3)
        }
    }

    private func assertCascadeMatchesTheScalarRecurrence(_ bands: [EQBand], channels: Int,
                                                         file: StaticString = #filePath, line: UInt = #line) {
        let n = 3000
        var rng = SplitMix64(seed: 9)
        // Noise, then silence (the decaying tails must agree too).
        let x = (0..<channels).map { c in (0..<n).map { i in i < n / 3 ? Float(rng.nextSignedUnit()) * Float(c + 1) / 3 : 0 } }
        let expected = x.map { scalarCascade($0, bands) }
        let buffers = x.map { ch -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(from: ch, count: n)
            return p
        }
        let cascaded = x.map { ch -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(from: ch, count: n)
            return p
        }
        defer { (buffers + cascaded).forEach { $0.deallocate() } }
        let perBand = bands.map { Biquad(band: $0, sampleRate: sr, maximumChannelCount: channels) }
        let sections = ContiguousArray(bands.map { Biquad(band: $0, sampleRate: sr, maximumChannelCount: channels) })
        let scratch = Biquad.cascadeScratchCounts(sections: bands.count, channels: channels)
        let coefficients = UnsafeMutablePointer<Double>.allocate(capacity: scratch.coefficients)
        let state = UnsafeMutablePointer<Double>.allocate(capacity: scratch.state)
        coefficients.initialize(repeating: 0, count: scratch.coefficients)
        state.initialize(repeating: 0, count: scratch.state)
        defer { coefficients.deallocate(); state.deallocate() }
        XCTAssertTrue(sections.allSatisfy(\.isSteady))
        var done = 0
        for slice in [1, 7, 64, 10, 9, 11, 2, 500, 512, 1000].cycled(toCover: n) {
            let c = min(slice, n - done)
            if c == 0 { break }
            let ins = buffers.map { UnsafePointer($0 + done) }, outs = buffers.map { $0 + done }
            ins.withUnsafeBufferPointer { ib in outs.withUnsafeBufferPointer { ob in
                for f in perBand { f.process(input: ib, output: ob, frameCount: c, startFrame: Int64(done)) }
            } }
            cascaded.map { $0 + done }.withUnsafeBufferPointer { ob in
                Biquad.processSteadyCascade(sections, channels: channels, buffers: ob, frameCount: c,
                                            coefficients: coefficients, state: state)
            }
            done += c
        }
        for ch in 0..<channels {
            let paired = Array(UnsafeBufferPointer(start: buffers[ch], count: n))
            let frameMajor = Array(UnsafeBufferPointer(start: cascaded[ch], count: n))
            XCTAssertEqual(paired.map(\.bitPattern), expected[ch].map(\.bitPattern), "channel \(ch), band by band",
                           file: file, line: line)
            XCTAssertEqual(frameMajor.map(\.bitPattern), expected[ch].map(\.bitPattern),
                           "\(bands.count) sections, channel \(ch) of \(channels), cascade", file: file, line: line)
            XCTAssertNotEqual(expected[ch][n / 3 - 1], x[ch][n / 3 - 1], "the bands filter", file: file, line: line)
        }
    }
}

private extension Array {
    /// The elements repeated until their sum reaches `total` (slice patterns).
    func cycled(toCover total: Int) -> [Element] where Element == Int {
        var out: [Int] = [], sum = 0, i = 0
        while sum < total { out.append(self[i % count]); sum += self[i % count]; i += 1 }
        return out
    }
}
