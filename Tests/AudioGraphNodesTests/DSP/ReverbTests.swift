// Tests of the one reverb engine (the reverb node's and the environment's send): decay time per preset, stability, slicing independence.

import Foundation
import XCTest
@testable import AudioGraphNodes

final class ReverbTests: XCTestCase {
    let sampleRate = 48000.0

    private func impulseResponse(_ preset: Reverb.Preset, seconds: Double, slice: Int = 512, level: Double = 0) -> (l: [Float], r: [Float]) {
        let reverb = Reverb(sampleRate: sampleRate, preset: preset, level: level)
        let n = Int(seconds * sampleRate)
        var input = [Float](repeating: 0, count: n)
        input[0] = 1
        var l = [Float](repeating: 0, count: n), r = l
        var pos = 0
        while pos < n {
            let c = min(slice, n - pos)
            input.withUnsafeBufferPointer { i in
                l.withUnsafeMutableBufferPointer { lp in
                    r.withUnsafeMutableBufferPointer { rp in
                        reverb.process(input: i.baseAddress! + pos, left: lp.baseAddress! + pos,
                                       right: rp.baseAddress! + pos, frameCount: c, accumulate: false)
                    }
                }
            }
            pos += c
        }
        return (l, r)
    }

    /// Decay time from the Schroeder backward-integrated energy curve: the time from -5 dB to
    /// -35 dB, times 2 (T30), of `x` after a one-pole low-pass at `cutoff` Hz (nil: broadband).
    private func decayTime(_ x: [Float], lowPass cutoff: Double?) -> Double {
        var y = x.map(Double.init)
        if let fc = cutoff {
            let a = 1 - exp(-2 * Double.pi * fc / sampleRate)
            var s = 0.0
            for i in y.indices { s += a * (y[i] - s); y[i] = s }
        }
        var edc = [Double](repeating: 0, count: y.count)
        var acc = 0.0
        for i in stride(from: y.count - 1, through: 0, by: -1) { acc += y[i] * y[i]; edc[i] = acc }
        let total = edc[0]
        let db = edc.map { 10 * log10($0 / total) }
        let t5 = db.firstIndex { $0 <= -5 }!, t35 = db.firstIndex { $0 <= -35 }!
        return 2 * Double(t35 - t5) / sampleRate
    }

    func testDecayTimesMatchThePresets() {
        for preset in Reverb.Preset.allCases {
            let ir = impulseResponse(preset, seconds: preset.decayTime * 2.5)
            let low = decayTime(ir.l, lowPass: 150)
            let broad = decayTime(ir.l, lowPass: nil)
            print("reverb \(preset.rawValue): T60 \(preset.decayTime) s documented, measured low \(String(format: "%.3f", low)) s, broadband \(String(format: "%.3f", broad)) s")
            XCTAssertEqual(low, preset.decayTime, accuracy: preset.decayTime * 0.1, "\(preset) low-frequency T60")
            XCTAssertLessThan(broad, low * 1.02, "\(preset): highs decay faster")
            XCTAssertGreaterThan(broad, preset.decayTime * preset.highFrequencyRatio * 0.8, "\(preset) broadband")
        }
    }

    func testStableAndDecaysToSilence() {
        for preset in Reverb.Preset.allCases {
            let ir = impulseResponse(preset, seconds: preset.decayTime * 4)
            XCTAssertTrue(ir.l.allSatisfy(\.isFinite) && ir.r.allSatisfy(\.isFinite))
            let peak = ir.l.prefix(Int(sampleRate) / 5).map(abs).max()!
            let end = ir.l.suffix(4800).map(abs).max()!
            XCTAssertGreaterThan(peak, 0.01, "\(preset) makes sound")
            XCTAssertLessThan(end, peak * 1e-3, "\(preset) dies away (4 T60 ≈ -240 dB of energy)")
        }
        // Left and right are decorrelated.
        let ir = impulseResponse(.mediumRoom, seconds: 1)
        var lr = 0.0, ll = 0.0, rr = 0.0
        for i in ir.l.indices { lr += Double(ir.l[i] * ir.r[i]); ll += Double(ir.l[i] * ir.l[i]); rr += Double(ir.r[i] * ir.r[i]) }
        XCTAssertLessThan(abs(lr) / (ll * rr).squareRoot(), 0.3)
    }

    func testImpulseResponseHasAboutUnitEnergyAtZeroDecibels() {
        for preset in Reverb.Preset.allCases {
            let ir = impulseResponse(preset, seconds: preset.decayTime * 2)
            let el = 10 * log10(ir.l.reduce(0.0) { $0 + Double($1 * $1) })
            let er = 10 * log10(ir.r.reduce(0.0) { $0 + Double($1 * $1) })
            print("reverb \(preset.rawValue): impulse response energy L \(String(format: "%.2f", el)) dB, R \(String(format: "%.2f", er)) dB")
            XCTAssertEqual(el, 0, accuracy: 1, "\(preset)")
            XCTAssertEqual(el, er, accuracy: 1.5, "\(preset): both sides alike")
        }
    }

    func testLevelScalesTheOutput() {
        let a = impulseResponse(.plate, seconds: 0.3), b = impulseResponse(.plate, seconds: 0.3, level: -12)
        for i in stride(from: 0, to: a.l.count, by: 97) {
            XCTAssertEqual(b.l[i], a.l[i] * Float(pow(10, -12.0 / 20)), accuracy: 1e-6)
        }
    }

    func testSameOutputForAnySliceSize() {
        let reference = impulseResponse(.largeHall, seconds: 0.5, slice: 4096)
        for slice in [1, 64, 333, 512] {
            let out = impulseResponse(.largeHall, seconds: 0.5, slice: slice)
            XCTAssertEqual(out.l, reference.l, "slice \(slice)")
            XCTAssertEqual(out.r, reference.r, "slice \(slice)")
        }
    }

    /// Review item 14: one NaN input sample used to circulate in the feedback forever (the
    /// denormal flush let it through) and silence the reverb; now the output stays finite and
    /// a later impulse reverberates as loud as in a clean reverb.
    func testNaNInputSampleDoesNotSilenceTheTail() {
        let n = Int(sampleRate)
        let later = n / 2
        func run(withNaN: Bool) -> [Float] {
            let reverb = Reverb(sampleRate: sampleRate, preset: .mediumRoom, level: 0)
            var input = [Float](repeating: 0, count: n)
            if withNaN { input[100] = .nan }
            input[later] = 1
            var l = [Float](repeating: 0, count: n), r = l
            input.withUnsafeBufferPointer { i in
                l.withUnsafeMutableBufferPointer { lp in
                    r.withUnsafeMutableBufferPointer { rp in
                        reverb.process(input: i.baseAddress!, left: lp.baseAddress!, right: rp.baseAddress!,
                                       frameCount: n, accumulate: false)
                    }
                }
            }
            return l
        }
        let bad = run(withNaN: true), clean = run(withNaN: false)
        XCTAssertTrue(bad.allSatisfy(\.isFinite))
        let energy = { (x: ArraySlice<Float>) in x.reduce(0.0) { $0 + Double($1 * $1) } }
        let ratio = energy(bad[later...]) / energy(clean[later...])
        XCTAssertGreaterThan(ratio, 0.5, "the reverb still reverberates after a NaN")
        XCTAssertLessThan(ratio, 2)
    }
}
