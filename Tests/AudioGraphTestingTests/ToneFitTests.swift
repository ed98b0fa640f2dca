// Tests ToneFit on exact models, a known harmonic, and against numpy.linalg.lstsq reference numbers.
import AudioGraphTesting
import Foundation
import XCTest

final class ToneFitTests: XCTestCase {
    func testRecoversAmplitudesPhasesAndDCOfAnExactModel() {
        let sr = 48000.0
        let x = zip(TestSignals.sine(frequency: 440, amplitude: 0.25, sampleRate: sr, count: 3000, phase: -2.0, offset: -0.03),
                    TestSignals.sine(frequency: 2500.7, amplitude: 0.6, sampleRate: sr, count: 3000, phase: 1.1))
            .map { $0 + $1 }
        let fit = ToneFit(x, sampleRate: sr, frequencies: [440, 2500.7])
        XCTAssertEqual(fit.tones.map(\.frequency), [440, 2500.7])
        XCTAssertEqual(fit.tones[0].amplitude, 0.25, accuracy: 1e-12)
        XCTAssertEqual(fit.tones[0].phase, -2.0, accuracy: 1e-10)
        XCTAssertEqual(fit.tones[1].amplitude, 0.6, accuracy: 1e-12)
        XCTAssertEqual(fit.tones[1].phase, 1.1, accuracy: 1e-10)
        XCTAssertEqual(fit.dc, -0.03, accuracy: 1e-12)
        XCTAssertEqual(fit.residual.count, 3000)
        XCTAssertLessThan(fit.residualRMS, 1e-13)
        XCTAssertLessThan(fit.thdPlusNoiseDB, -200)
        XCTAssertEqual(fit.amplitude(at: 2500.7)!, 0.6, accuracy: 1e-12)
        XCTAssertNil(fit.amplitude(at: 1000))
    }

    func testTHDPlusNoiseOfAnUnfittedHarmonic() {
        // 1 kHz over exactly 100 periods plus a third harmonic at 1 % that the fit is not told about:
        // the columns are orthogonal, so the residual is exactly the harmonic and THD+N = −40 dB.
        let sr = 48000.0
        let x = zip(TestSignals.sine(frequency: 1000, amplitude: 1, sampleRate: sr, count: 4800),
                    TestSignals.sine(frequency: 3000, amplitude: 0.01, sampleRate: sr, count: 4800, phase: 0.5))
            .map { $0 + $1 }
        let fit = ToneFit(x, sampleRate: sr, frequencies: [1000])
        XCTAssertEqual(fit.tones[0].amplitude, 1, accuracy: 1e-12)
        XCTAssertEqual(fit.residualRMS, 0.01 / 2.0.squareRoot(), accuracy: 1e-12)
        XCTAssertEqual(fit.fittedRMS, 1 / 2.0.squareRoot(), accuracy: 1e-12)
        XCTAssertEqual(fit.thdPlusNoiseDB, -40, accuracy: 1e-9)
    }

    func testWithoutDCTheOffsetStaysInTheResidual() {
        let x = TestSignals.sine(frequency: 1000, amplitude: 0.5, sampleRate: 48000, count: 4800, offset: 0.2)
        let fit = ToneFit(x.map { Float($0) }, sampleRate: 48000, frequencies: [1000], includeDC: false)
        XCTAssertEqual(fit.dc, 0)
        XCTAssertEqual(fit.tones[0].amplitude, 0.5, accuracy: 1e-7)
        XCTAssertEqual(fit.residualRMS, 0.2, accuracy: 1e-7)
    }

    func testDominantToneFindsFrequencyAmplitudeAndPhase() throws {
        // 1234.5 Hz is no whole number of periods in the window: the frequency is estimated, not assumed.
        let x = TestSignals.sine(frequency: 1234.5, amplitude: 0.4, sampleRate: 48000, count: 9600, phase: 0.7, offset: 0.01)
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: x.map { Float($0) }, sampleRate: 48000))
        XCTAssertEqual(fit.tones.count, 1)
        XCTAssertEqual(fit.tones[0].frequency, 1234.5, accuracy: 1e-4)
        XCTAssertEqual(fit.tones[0].amplitude, 0.4, accuracy: 1e-6)
        XCTAssertEqual(fit.tones[0].phase, 0.7, accuracy: 1e-4)
        XCTAssertEqual(fit.dc, 0.01, accuracy: 1e-6)
        XCTAssertLessThan(fit.residualRMS, 1e-6)
        XCTAssertNil(ToneFit(dominantToneOf: [Float](repeating: 0.3, count: 100), sampleRate: 48000))
    }

    /// The numbers below come from scripts/reference/tone_fit_reference.py (numpy.linalg.lstsq on
    /// the same signal, agcheck.tone_fit's method).
    func testMatchesNumpyLeastSquaresReference() {
        let sr = 44100.0, count = 10000
        let noise = TestSignals.lcgNoise(count: count)
        let x = (0..<count).map { n -> Double in
            let t = Double(n)
            return 0.01
                + 0.3 * sin(2 * Double.pi * 1000.5 * t / sr + 0.7)
                + 0.05 * sin(2 * Double.pi * 3333.3 * t / sr - 1.2)
                + 0.001 * sin(2 * Double.pi * 7000.0 * t / sr)
                + 1e-3 * noise[n]
        }
        let fit = ToneFit(x, sampleRate: sr, frequencies: [1000.5, 3333.3])
        XCTAssertEqual(fit.dc, 0.010003357783160702, accuracy: 1e-12)
        XCTAssertEqual(fit.tones[0].amplitude, 0.2999955391223884, accuracy: 1e-12)
        XCTAssertEqual(fit.tones[0].phase, 0.7000199446802031, accuracy: 1e-10)
        XCTAssertEqual(fit.tones[1].amplitude, 0.04998734577032491, accuracy: 1e-12)
        XCTAssertEqual(fit.tones[1].phase, -1.2000483606233376, accuracy: 1e-10)
        XCTAssertEqual(fit.residualRMS, 0.0009168313285531699, accuracy: 1e-14)
        XCTAssertEqual(fit.thdPlusNoiseDB, -47.41639396971345, accuracy: 1e-8)
    }
}
