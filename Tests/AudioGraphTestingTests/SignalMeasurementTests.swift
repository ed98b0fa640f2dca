// Tests SignalMeasurement against signals whose levels, delays and frequencies are known by construction.
import AudioGraphTesting
import Foundation
import XCTest

final class SignalMeasurementTests: XCTestCase {
    func testRMSOfSineOverWholePeriodsIsAmplitudeOverRootTwo() {
        let amplitude = 0.7
        // 1000 Hz at 48 kHz for 1 s: exactly 1000 periods.
        let x = TestSignals.sine(frequency: 1000, amplitude: amplitude, sampleRate: 48000, count: 48000, phase: 0.4)
        XCTAssertEqual(SignalMeasurement.rms(x), amplitude / 2.0.squareRoot(), accuracy: 1e-9)
        // The same signal in Float: only float rounding (about 3e-8 relative) separates them.
        XCTAssertEqual(SignalMeasurement.rms(x.map { Float($0) }), amplitude / 2.0.squareRoot(), accuracy: 1e-7)
    }

    func testRMSOfConstantAndOfNothing() {
        XCTAssertEqual(SignalMeasurement.rms([-0.25, -0.25, -0.25] as [Double]), 0.25)
        XCTAssertEqual(SignalMeasurement.rms([] as [Float]), 0)
        XCTAssertEqual(SignalMeasurement.rms([3, 4] as [Double]), (12.5).squareRoot(), accuracy: 1e-15)
    }

    func testPeakAndMean() {
        XCTAssertEqual(SignalMeasurement.peak([0.1, -0.9, 0.5] as [Float]), Double(Float(0.9)))
        XCTAssertEqual(SignalMeasurement.peak([] as [Double]), 0)
        XCTAssertTrue(SignalMeasurement.peak([0, .nan, 1] as [Double]).isNaN)
        XCTAssertEqual(SignalMeasurement.mean([1, 2, 3, 6] as [Double]), 3)
    }

    func testDBFS() {
        XCTAssertEqual(SignalMeasurement.dBFS(1), 0)
        XCTAssertEqual(SignalMeasurement.dBFS(0.5), -6.020599913279624, accuracy: 1e-12)
        XCTAssertEqual(SignalMeasurement.dBFS(-0.1), -20, accuracy: 1e-12)
        XCTAssertEqual(SignalMeasurement.dBFS(0), -.infinity)
        XCTAssertEqual(SignalMeasurement.linear(fromDecibels: -20), 0.1, accuracy: 1e-15)
        // A full-scale sine's RMS is 3.0103 dB below full scale.
        let x = TestSignals.sine(frequency: 100, amplitude: 1, sampleRate: 48000, count: 4800)
        XCTAssertEqual(SignalMeasurement.dBFS(SignalMeasurement.rms(x)), -10 * log10(2.0), accuracy: 1e-9)
    }

    func testMaxAbsDifference() {
        XCTAssertEqual(SignalMeasurement.maxAbsDifference([1, 2, 3] as [Double], [1, 2.5, 2] as [Float]), 1)
        XCTAssertEqual(SignalMeasurement.maxAbsDifference([1, 2] as [Double], [1, 2] as [Double]), 0)
        XCTAssertEqual(SignalMeasurement.maxAbsDifference([1, 2] as [Double], [1] as [Double]), .infinity)
        XCTAssertTrue(SignalMeasurement.maxAbsDifference([1, .nan] as [Double], [1, 2] as [Double]).isNaN)
    }

    func testBestLagFindsADelayAndAnAdvance() {
        let noise = TestSignals.lcgNoise(count: 2000)
        let delayed = [Double](repeating: 0, count: 37) + noise
        XCTAssertEqual(SignalMeasurement.bestLag(of: noise, in: delayed, maxLag: 100), 37)
        let advanced = Array(noise.dropFirst(12))
        XCTAssertEqual(SignalMeasurement.bestLag(of: noise, in: advanced, maxLag: 100), -12)
        XCTAssertEqual(SignalMeasurement.bestLag(of: noise, in: noise.map { Float($0) * 0.5 }, maxLag: 5), 0)
        XCTAssertEqual(SignalMeasurement.normalizedCrossCorrelation(of: noise, in: delayed, lag: 37)!, 1, accuracy: 1e-12)
        XCTAssertNil(SignalMeasurement.bestLag(of: noise, in: [Double](repeating: 0, count: 100), maxLag: 10))
    }

    func testEstimateFrequencyOfACleanSineWithOffsetAndPhase() throws {
        let x = TestSignals.sine(frequency: 997.3, amplitude: 0.5, sampleRate: 48000, count: 4800, phase: 0.3, offset: 0.1)
        let f = try XCTUnwrap(SignalMeasurement.estimateFrequency(x, sampleRate: 48000))
        XCTAssertEqual(f, 997.3, accuracy: 1e-5)
    }

    func testEstimateFrequencyOfLowAndHighTones() throws {
        for frequency in [20.0, 440.0, 15_000.0] {
            let x = TestSignals.sine(frequency: frequency, amplitude: 1, sampleRate: 48000, count: 48000, phase: 1)
            let f = try XCTUnwrap(SignalMeasurement.estimateFrequency(x.map { Float($0) }, sampleRate: 48000))
            XCTAssertEqual(f, frequency, accuracy: 1e-5, "\(frequency) Hz")
        }
    }

    func testEstimateFrequencyInNoise() throws {
        // Uniform noise of amplitude 0.1 and 0.5 on a unit sine: SNR 21.8 dB and 7.8 dB.
        let noise = TestSignals.lcgNoise(count: 9600, seed: 7)
        for (level, tolerance) in [(0.1, 0.01), (0.5, 0.05)] {
            let x = zip(TestSignals.sine(frequency: 1234.5, amplitude: 1, sampleRate: 48000, count: 9600, phase: 1), noise)
                .map { $0 + level * $1 }
            let f = try XCTUnwrap(SignalMeasurement.estimateFrequency(x, sampleRate: 48000))
            XCTAssertEqual(f, 1234.5, accuracy: tolerance, "noise \(level)")
        }
    }

    func testEstimateFrequencyNeedsTwoCrossings() {
        XCTAssertNil(SignalMeasurement.estimateFrequency([Double](repeating: 0.5, count: 100), sampleRate: 48000))
        XCTAssertNil(SignalMeasurement.estimateFrequency([] as [Double], sampleRate: 48000))
    }
}
