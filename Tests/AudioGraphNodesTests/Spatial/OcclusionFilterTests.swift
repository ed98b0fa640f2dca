// Tests of the occlusion/obstruction attenuation and low-pass mapping.

import Foundation
import XCTest
@testable import AudioGraphNodes

final class OcclusionFilterTests: XCTestCase {
    let sampleRate = 48000.0

    /// The magnitude of `s[n] = s[n-1] + a(g u[n] - s[n-1])` at f: g·a / |1 - (1-a)e^{-jw}|.
    private func expectedMagnitude(gainDB: Double, frequency f: Double) -> Double {
        let g = pow(10, gainDB / 20)
        let fc = max(20, 20000 * pow(10, gainDB / 20))
        let a = 1 - exp(-2 * .pi * fc / sampleRate)
        let w = 2 * .pi * f / sampleRate
        let re = 1 - (1 - a) * cos(w), im = (1 - a) * sin(w)
        return g * a / (re * re + im * im).squareRoot()
    }

    /// The amplitude of a sine after the filter has settled (least-squares fit of sin and cos).
    private func measure(_ filter: inout OcclusionFilter, frequency f: Double) -> Double {
        let n = 48000
        var s = 0.0, c = 0.0
        for i in 0..<n {
            let ph = 2 * Double.pi * f * Double(i) / sampleRate
            let y = Double(filter.process(Float(sin(ph))))
            if i >= n / 2 { s += y * sin(ph); c += y * cos(ph) }
        }
        let half = Double(n / 2)
        return 2 * (s * s + c * c).squareRoot() / half
    }

    func testZeroDecibelsIsTheIdentity() {
        var f = OcclusionFilter(sampleRate: sampleRate)
        f.setAttenuation(0)
        for i in 0..<1000 {
            let x = Float(sin(Double(i) * 0.37)) * 0.9
            XCTAssertEqual(f.process(x), x)
        }
        XCTAssertEqual(OcclusionFilter.cutoff(attenuation: 0), .infinity)
    }

    func testCutoffMapping() {
        XCTAssertEqual(OcclusionFilter.cutoff(attenuation: -20), 2000, accuracy: 1e-9)
        XCTAssertEqual(OcclusionFilter.cutoff(attenuation: -40), 200, accuracy: 1e-9)
        XCTAssertEqual(OcclusionFilter.cutoff(attenuation: -6), 20000 * pow(10, -0.3), accuracy: 1e-9)
        XCTAssertEqual(OcclusionFilter.cutoff(attenuation: -80), 20, accuracy: 1e-9)
        XCTAssertEqual(OcclusionFilter.cutoff(attenuation: -100), 20, accuracy: 1e-9)
    }

    func testAttenuationAndLowPassMatchTheFormula() {
        for dB in [-3.0, -12, -20, -40] {
            for freq in [100.0, 1000, 5000] {
                var f = OcclusionFilter(sampleRate: sampleRate)
                f.setAttenuation(dB)
                let got = measure(&f, frequency: freq)
                let want = expectedMagnitude(gainDB: dB, frequency: freq)
                XCTAssertEqual(got, want, accuracy: want * 1e-3 + 1e-6, "\(dB) dB at \(freq) Hz")
            }
        }
        // At DC the gain is exactly the attenuation.
        var f = OcclusionFilter(sampleRate: sampleRate)
        f.setAttenuation(-20)
        var y: Float = 0
        for _ in 0..<48000 { y = f.process(1) }
        XCTAssertEqual(Double(y), 0.1, accuracy: 1e-5)
    }

    func testHigherFrequenciesAreAttenuatedMore() {
        var lo = OcclusionFilter(sampleRate: sampleRate), hi = OcclusionFilter(sampleRate: sampleRate)
        lo.setAttenuation(-20); hi.setAttenuation(-20)
        XCTAssertGreaterThan(measure(&lo, frequency: 200), 3 * measure(&hi, frequency: 10000))
    }

    func testDirectAndReverbPaths() {
        XCTAssertEqual(OcclusionFilter.directAttenuation(occlusion: -10, obstruction: -6), -16)
        XCTAssertEqual(OcclusionFilter.reverbAttenuation(occlusion: -10, obstruction: -6), -10)
        XCTAssertEqual(OcclusionFilter.reverbAttenuation(occlusion: 0, obstruction: -30), 0)
        XCTAssertEqual(OcclusionFilter.directAttenuation(occlusion: -80, obstruction: -60), -100)
    }
}
