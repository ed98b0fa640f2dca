// Tests that SignalCheck passes what holds and fails, with a message naming the place, what does not.
import AudioGraphTesting
import XCTest

final class SignalCheckTests: XCTestCase {
    func testCloseAcceptsErrorsWithinTolerance() {
        XCTAssertNil(SignalCheck.close([0.1, 0.2, 0.3] as [Float], [0.1, 0.2, 0.3] as [Double], tolerance: 1e-7))
        XCTAssertNil(SignalCheck.close([1.0, 2.0] as [Double], [1.00005, 1.99995] as [Double], tolerance: 1e-4))
        XCTAssertNil(SignalCheck.identical([1, 2] as [Double], [1, 2] as [Float]))
    }

    func testCloseNamesTheWorstAndTheFirstBadFrame() throws {
        var expected = [Double](repeating: 0, count: 10)
        var actual = expected
        actual[3] = 0.001
        actual[7] = -0.5
        expected[9] = 1
        actual[9] = 1
        let failure = try XCTUnwrap(SignalCheck.close(actual, expected, tolerance: 1e-4, "left", frameOffset: 100))
        XCTAssertEqual(failure.message,
                       "left: max |error| 0.5 > 0.0001 at frame 107 (got -0.5, expected 0); "
                       + "first bad sample at frame 103 (got 0.001, expected 0)")
        XCTAssertEqual(SignalCheck.close([1.0] as [Double], [1.0, 2.0] as [Double], tolerance: 1, "x")?.message,
                       "x: 1 samples, expected 2")
        XCTAssertNotNil(SignalCheck.close([Double.nan] as [Double], [0] as [Double], tolerance: 1))
        XCTAssertNotNil(SignalCheck.identical([1] as [Double], [Double(Float(1).nextUp)] as [Double]))
    }

    func testSilent() {
        XCTAssertNil(SignalCheck.silent([0, 0, -0.0] as [Float]))
        XCTAssertNil(SignalCheck.silent([1e-6, -1e-6] as [Double], threshold: 1e-5))
        XCTAssertEqual(SignalCheck.silent([0, 0, 0.25, -0.5] as [Double], "tail")?.message,
                       "tail: not silent: |sample| 0.25 > 0 at frame 2 (peak 0.5)")
    }

    func testLevelInDecibels() {
        XCTAssertNil(SignalCheck.level(0.5, expected: 0.5 * 1.005, toleranceDB: 0.05))   // 0.043 dB
        XCTAssertEqual(SignalCheck.level(0.5, expected: 1, toleranceDB: 0.05, "gain")?.message,
                       "gain: 0.5, expected 1 (-6.021 dB, limit ±0.05 dB)")
        XCTAssertNotNil(SignalCheck.level(0, expected: 1, toleranceDB: 100))
        XCTAssertNil(SignalCheck.level(0, expected: 0, toleranceDB: 0.1))
    }

    func testTonesChecksAmplitudesAndTHDPlusNoise() {
        let sr = 48000.0
        let x = zip(TestSignals.sine(frequency: 1000, amplitude: 0.5, sampleRate: sr, count: 4800, phase: 0.2),
                    TestSignals.sine(frequency: 3000, amplitude: 0.005, sampleRate: sr, count: 4800))
            .map { $0 + $1 }
        // The 3 kHz partial is 40 dB down: residual when not listed, a tone when it is.
        XCTAssertNil(SignalCheck.tones(x, sampleRate: sr, expected: [1000: 0.5], toleranceDB: 0.001, thdPlusNoiseMaxDB: -39.9))
        XCTAssertEqual(SignalCheck.tones(x, sampleRate: sr, expected: [1000: 0.5], toleranceDB: 0.001,
                                         thdPlusNoiseMaxDB: -60, "out")?.message,
                       "out: THD+N -40.0 dB, limit -60 dB")
        XCTAssertNil(SignalCheck.tones(x, sampleRate: sr, expected: [1000: 0.5], toleranceDB: 0.001,
                                       extraFrequencies: [3000], thdPlusNoiseMaxDB: -200))
        XCTAssertEqual(SignalCheck.tones(x, sampleRate: sr, expected: [1000: 0.5, 3000: 0.01], toleranceDB: 0.05, "out")?.message,
                       "out: tone 3000 Hz amplitude: 0.005, expected 0.01 (-6.021 dB, limit ±0.05 dB)")
    }

    func testFrequency() {
        let x = TestSignals.sine(frequency: 440, amplitude: 1, sampleRate: 48000, count: 4800)
        XCTAssertNil(SignalCheck.frequency(x, sampleRate: 48000, expected: 440, toleranceHz: 0.01))
        XCTAssertEqual(SignalCheck.frequency(x, sampleRate: 48000, expected: 441, toleranceHz: 0.5, "osc")?.message,
                       "osc: frequency 440 Hz, expected 441 ± 0.5 Hz")
        XCTAssertNotNil(SignalCheck.frequency([0, 0, 0] as [Double], sampleRate: 48000, expected: 1, toleranceHz: 1))
    }
}
