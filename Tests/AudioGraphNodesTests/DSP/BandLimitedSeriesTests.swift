// Tests of BandLimitedSeries against the Fourier series summed term by term, and the recurrence it replaced.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class BandLimitedSeriesTests: XCTestCase {
    /// The series written out: every harmonic k <= min(512, floor((sr/2)/f)), each sine from libm.
    private func reference(_ w: Waveform, phase: Double, frequency f: Double, sampleRate sr: Double) -> Double {
        fourierSeries(w, theta: 2 * Double.pi * phase, frequency: f, sampleRate: sr)
    }

    /// The kernel OscillatorNode used before BandLimitedSeries (one angle-addition chain, a
    /// division per harmonic), kept here so the new one is held to the values it replaced.
    private func previous(_ waveform: Waveform, phase: Double, frequency: Double, sampleRate: Double) -> Double {
        guard frequency > 0 else { return 0 }
        let harmonics = min(512, Int((sampleRate / 2) / frequency))
        if harmonics < 1 { return 0 }
        let theta = 2 * Double.pi * phase
        let s1 = sin(theta), c1 = cos(theta)
        var sum = 0.0
        let n = Double(harmonics)
        var k = 1.0
        if waveform == .sawtooth {
            var sk = s1, ck = c1
            let sr = -s1, cr = -c1
            while k <= n {
                sum += sk / k
                let s = sk * cr + ck * sr
                ck = ck * cr - sk * sr
                sk = s
                k += 1
            }
            return 2 / Double.pi * sum
        }
        let s2 = 2 * s1 * c1, c2 = c1 * c1 - s1 * s1
        var sk = s1, ck = c1
        var sign = 1.0
        while k <= n {
            sum += waveform == .square ? sk / k : sign * sk / (k * k)
            let s = sk * c2 + ck * s2
            ck = ck * c2 - sk * s2
            sk = s
            sign = -sign
            k += 2
        }
        return waveform == .square ? 4 / Double.pi * sum : 8 / (Double.pi * Double.pi) * sum
    }

    private struct Worst {
        var error = 0.0
        var at = ""
        mutating func note(_ e: Double, _ place: @autoclosure () -> String) {
            if !(e <= error) { error = e; at = place() }
        }
    }

    /// Frequencies 20 Hz ... 20 kHz (every harmonic count from 512 down to 1 appears) and phases
    /// including the awkward ones: near 0, 1/4, 1/2, 1, and near multiples of 1/64, where the
    /// lane rotation by 8*delta is close to a whole turn.
    func testMatchesTheSeriesSummedTermByTerm() {
        var phases: [Double] = [0, 1e-15, 1e-12, 1e-9, 1e-6, 0.25, 0.5 - 1e-9, 0.5, 0.5 + 1e-9, 0.75, 1 - 1e-9, 1 - 1e-15,
                                1.0 / 3, 0.1]
        for j in 1..<64 { phases += [Double(j) / 64, Double(j) / 64 + 1e-11, Double(j) / 64 - 3e-8] }
        var generator = SplitMix64(seed: 2024)
        for _ in 0..<150 { phases.append((generator.nextSignedUnit() + 1) / 2) }
        var toReference = Worst(), toPrevious = Worst()
        var comparisons = 0
        for sr in [44100.0, 48000.0] {
            var frequencies: [Double] = [20, 21.5, 43.07, 44.1, 46.875, 47, 55, 110, 220, 329.63, 440, 441, 880, 1000,
                                         1318.5, 2756.25, 5000, 7350, 11025, 12000, 15000, 19999.9, 20000]
            for i in 0...80 { frequencies.append(20 * pow(1000, Double(i) / 80)) }  // log-spaced 20 Hz ... 20 kHz
            for f in frequencies {
                for p in phases {
                    for w in [Waveform.square, .sawtooth, .triangle] {
                        let value = BandLimitedSeries.shared.value(w, phase: p, frequency: f, sampleRate: sr)
                        toReference.note(abs(value - reference(w, phase: p, frequency: f, sampleRate: sr)), "\(w) \(f) Hz at \(sr), phase \(p)")
                        toPrevious.note(abs(value - previous(w, phase: p, frequency: f, sampleRate: sr)), "\(w) \(f) Hz at \(sr), phase \(p)")
                        comparisons += 1
                    }
                }
            }
        }
        print("BandLimitedSeries: \(comparisons) values; max |difference| to the term-by-term series \(toReference.error) (\(toReference.at)), to the previous recurrence \(toPrevious.error) (\(toPrevious.at))")
        XCTAssertLessThanOrEqual(toReference.error, 1e-9, toReference.at)
        XCTAssertLessThanOrEqual(toPrevious.error, 1e-9, toPrevious.at)
    }

    /// Frequency automation: a per-sample exponential sweep 20 Hz -> 20 kHz with the phase
    /// accumulated as OscillatorNode does, so the harmonic count changes from sample to sample.
    func testFollowsAPerSampleFrequencySweep() {
        for sr in [44100.0, 48000.0] {
            let frames = 24000
            for w in [Waveform.square, .sawtooth, .triangle] {
                var phase = 0.0
                var worst = Worst()
                var counts = Set<Int>()
                for n in 0..<frames {
                    let f = 20 * pow(1000, Double(n) / Double(frames - 1))
                    counts.insert(min(512, Int(sr / 2 / f)))
                    let value = BandLimitedSeries.shared.value(w, phase: phase, frequency: f, sampleRate: sr)
                    worst.note(abs(value - reference(w, phase: phase, frequency: f, sampleRate: sr)), "frame \(n), \(f) Hz")
                    phase += f / sr
                    if phase >= 1 { phase -= phase.rounded(.down) }
                }
                XCTAssertLessThanOrEqual(worst.error, 1e-9, "\(w) at \(sr): \(worst.at)")
                XCTAssertGreaterThan(counts.count, 300, "the sweep crosses many harmonic counts")
            }
        }
    }

    func testEdgeCasesAreSilent() {
        XCTAssertEqual(BandLimitedSeries.shared.value(.square, phase: 0.3, frequency: 0, sampleRate: 48000), 0)
        XCTAssertEqual(BandLimitedSeries.shared.value(.sawtooth, phase: 0.3, frequency: -5, sampleRate: 48000), 0)
        XCTAssertEqual(BandLimitedSeries.shared.value(.triangle, phase: 0.3, frequency: 24001, sampleRate: 48000), 0, "no harmonic below Nyquist")
        XCTAssertEqual(BandLimitedSeries.shared.value(.sine, phase: 0.3, frequency: 440, sampleRate: 48000), 0)
        // At exactly Nyquist one harmonic remains: the fundamental.
        XCTAssertEqual(BandLimitedSeries.shared.value(.square, phase: 0.125, frequency: 24000, sampleRate: 48000),
                       4 / Double.pi * sin(Double.pi / 4), accuracy: 1e-15)
    }
}

extension BandLimitedSeriesTests {
    /// The phase-in-cycles sine/cosine against libm's sin/cos of 2*pi*x over [0, 1].
    func testSinCosOfAPhaseInCycles() {
        var worst = 0.0, at = 0.0
        var xs: [Double] = [0, 0.125, 0.125 + 1e-17, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1 - 1e-16, 1]
        for i in 0..<100_000 { xs.append(Double(i) / 100_000) }
        for x in xs {
            let (s, c) = BandLimitedSeries.sinCos(cycles: x)
            let e = max(abs(s - sin(2 * Double.pi * x)), abs(c - cos(2 * Double.pi * x)))
            if e > worst { worst = e; at = x }
        }
        XCTAssertLessThan(worst, 2e-15, "at \(at)")
    }
}

extension BandLimitedSeriesTests {
    /// Two frames evaluated together give, bit for bit, what each gives alone (so the output does
    /// not depend on how frames pair up within slices), also when their harmonic counts differ.
    func testAPairIsBitIdenticalToEachAlone() {
        let series = BandLimitedSeries.shared
        var generator = SplitMix64(seed: 99)
        func unit() -> Double { (generator.nextSignedUnit() + 1) / 2 }
        for _ in 0..<20_000 {
            let sr = unit() < 0.5 ? 44100.0 : 48000.0
            let a = (phase: unit(), frequency: 20 * pow(1000, unit()))
            let b = (phase: unit(), frequency: unit() < 0.1 ? 0 : 20 * pow(1000, unit()))
            for w in [Waveform.square, .sawtooth, .triangle] {
                let (x, y) = series.valuePair(w, a, b, sampleRate: sr)
                let alone = (series.value(w, phase: a.phase, frequency: a.frequency, sampleRate: sr),
                             series.value(w, phase: b.phase, frequency: b.frequency, sampleRate: sr))
                XCTAssertEqual(x.bitPattern, alone.0.bitPattern, "\(w) \(a) with \(b)")
                XCTAssertEqual(y.bitPattern, alone.1.bitPattern, "\(w) \(b) with \(a)")
                XCTAssertLessThanOrEqual(abs(x - reference(w, phase: a.phase, frequency: a.frequency, sampleRate: sr)), 1e-9)
            }
        }
    }
}

extension BandLimitedSeriesTests {
    /// Rendered through OscillatorNode (frames evaluated in pairs within a slice), a band-limited
    /// wave with a start at an odd frame and a per-sample frequency ramp is the same for any
    /// slicing, including odd slice lengths that pair the frames differently.
    func testOscillatorOutputIsTheSameForAnySlicing() throws {
        func render(slice: Int, slices: [Int]?, _ w: Waveform) throws -> [Float] {
            let o = OscillatorNode(id: "osc", sampleRate: 48000, properties: OscillatorProperties(waveform: w, startTime: 0.0001))
            try o.setParameter("frequency", 60)
            let g = try startedGraph([o], "osc -> out", slice: slice)
            var x = renderFrames(g, frames: 1001, channels: 1, slices: slices)[0]
            try o.setParameter("frequency", 9000, rampFrames: 3001)  // the harmonic count changes every few frames
            try g.update(waitUntilApplied: false)
            x += renderFrames(g, frames: 4000, channels: 1, slices: slices)[0]
            return x
        }
        for w in [Waveform.square, .sawtooth, .triangle] {
            let whole = try render(slice: 512, slices: nil, w)
            XCTAssertEqual(whole.count, 5001)
            XCTAssertGreaterThan(whole.map(abs).max()!, 0.5, "\(w) sounds")
            let bits = whole.map(\.bitPattern)  // bit for bit, signed zeros too
            XCTAssertEqual(bits, try render(slice: 64, slices: [1, 7, 64, 13], w).map(\.bitPattern), "\(w)")
            XCTAssertEqual(bits, try render(slice: 1, slices: [1], w).map(\.bitPattern), "\(w)")
        }
    }
}
