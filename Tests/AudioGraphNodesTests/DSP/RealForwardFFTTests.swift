// Tests of RealForwardFFT against the discrete Fourier transform summed term by term in Double.
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class RealForwardFFTTests: XCTestCase {
    /// Random input of 8, 96 (not a power of two) and 1024 points: every bin 0...size/2 is the
    /// direct sum `Σ x[n] e^(-2πikn/N)` within 1e-4 of the largest magnitude, and the input is
    /// left as it was; a second transform of other data overwrites the first.
    func testEveryBinIsTheDirectSum() {
        var random = SeededRandom(seed: 7)
        for size in [8, 96, 1024] {
            let fft = RealForwardFFT(size: size)
            for round in 0..<2 {
                let x = (0..<size).map { _ in Float.random(in: -1...1, using: &random) }
                for n in 0..<size { fft.input[n] = x[n] }
                fft.transform()
                var largest = 0.0
                var expected: [(Double, Double)] = []
                for k in 0...(size / 2) {
                    var re = 0.0, im = 0.0
                    for n in 0..<size {
                        let angle = -2 * Double.pi * Double(k * n % size) / Double(size)
                        re += Double(x[n]) * cos(angle)
                        im += Double(x[n]) * sin(angle)
                    }
                    expected.append((re, im))
                    largest = max(largest, (re * re + im * im).squareRoot())
                }
                for k in 0...(size / 2) {
                    XCTAssertEqual(Double(fft.output[2 * k]), expected[k].0, accuracy: 1e-4 * largest, "size \(size) round \(round) Re X[\(k)]")
                    XCTAssertEqual(Double(fft.output[2 * k + 1]), expected[k].1, accuracy: 1e-4 * largest, "size \(size) round \(round) Im X[\(k)]")
                }
                XCTAssertEqual((0..<size).map { fft.input[$0] }, x, "the input is kept")
            }
        }
    }
}
