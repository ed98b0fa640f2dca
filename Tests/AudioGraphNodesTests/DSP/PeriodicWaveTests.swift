// Tests of PeriodicWave: the default wave's normalization without the peak search.
import XCTest
@testable import AudioGraphNodes

final class PeriodicWaveTests: XCTestCase {
    /// Web Audio's default wave (no `real`, no `imag`: sin(2πt)) is made without the peak search,
    /// with scale 1; the search itself finds exactly 1.0 for it, so skipping it changes no bit of
    /// any oscillator's output. A custom wave is still normalized by the search: the square
    /// wave's first terms (4/π · sin(2πkt)/k, k odd) peak near 1.18 (Gibbs), and the normalized
    /// wave's largest value on a fine grid is 1 within 1e-6.
    func testTheDefaultWaveSkipsTheSearchThatWouldFindExactlyOne() {
        let wave = PeriodicWave(real: nil, imag: nil, disableNormalization: false)
        XCTAssertEqual(wave.scale, 1)
        XCTAssertEqual(wave.sines[1], 1)
        XCTAssertEqual(PeriodicWave.peak(wave.cosines, wave.sines, wave.count), 1.0, "the search's own answer")
        var imag = [Double](repeating: 0, count: 16)
        for k in stride(from: 1, to: 16, by: 2) { imag[k] = 4 / Double.pi / Double(k) }
        let square = PeriodicWave(real: nil, imag: imag, disableNormalization: false)
        XCTAssertEqual(1 / square.scale, 1.18, accuracy: 0.02)
        var top = 0.0
        for j in 0..<200_000 {
            top = max(top, abs(PeriodicWave.sum(square.cosines, square.sines, terms: 15, phase: Double(j) / 200_000)))
        }
        XCTAssertEqual(top, 1, accuracy: 1e-6)
    }
}
