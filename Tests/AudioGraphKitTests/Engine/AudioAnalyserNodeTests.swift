// AudioAnalyserNode in an engine rendered offline: Web Audio's getters against numpy (scripts/reference) and the formulas, and the dominant frequency.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioAnalyserNodeTests: XCTestCase {
    /// numpy's Web Audio analysis of `blocks` (scripts/reference/analyser_reference.py).
    private func reference(tau: Double, blocks: [[Float]]) throws -> [Double] {
        try ReferenceScript.analyser(tau: tau, blocks: blocks, in: TestFiles.makeTemporaryDirectory(self))
    }

    /// source (1234.5 Hz sine, 0.5, stereo) -> analyser -> main mixer, offline.
    private func makeEngine(fftSize: Int = 2048) throws -> (AudioEngine, AudioAnalyserNode) {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 1234.5)
        let analyser = AudioAnalyserNode(fftSize: fftSize)
        engine.attach(source)
        engine.attach(analyser)
        engine.connect(source, to: analyser, format: nil)
        engine.connect(analyser, to: engine.mainMixerNode, format: nil)
        try engine.start()
        return (engine, analyser)
    }

    func testBeforeRenderingTheDataIsSilence() throws {
        let analyser = AudioAnalyserNode()
        XCTAssertEqual(analyser.fftSize, 2048)
        XCTAssertEqual(analyser.frequencyBinCount, 1024)
        XCTAssertEqual(analyser.smoothingTimeConstant, 0.8)
        XCTAssertEqual(analyser.minDecibels, -100)
        XCTAssertEqual(analyser.maxDecibels, -30)
        var f = [Float](repeating: 0, count: 1024), t = [Float](repeating: 1, count: 2048)
        var b = [UInt8](repeating: 7, count: 2048)
        analyser.getFloatFrequencyData(&f)
        analyser.getFloatTimeDomainData(&t)
        analyser.getByteTimeDomainData(&b)
        XCTAssertTrue(f.allSatisfy { $0 == -.infinity })
        XCTAssertTrue(t.allSatisfy { $0 == 0 })
        XCTAssertTrue(b.allSatisfy { $0 == 128 })
        XCTAssertNil(analyser.dominantFrequency())
    }

    /// The getters after rendering: time domain = the last fftSize frames of the formula; the
    /// frequency data = numpy's Web Audio analysis within 0.01 dB (two reads, smoothing 0.8);
    /// bytes by the W3C formulas from the float data.
    func testGettersMatchNumpyAndTheFormulas() throws {
        let (engine, analyser) = try makeEngine(fftSize: 1024)
        _ = try render(engine, frames: 3000, piece: 500)
        var time = [Float](repeating: 0, count: 1024)
        analyser.getFloatTimeDomainData(&time)
        let first = (0..<1024).map { sineSample(Int64(3000 - 1024 + $0), frequency: 1234.5, rate: 48000) }
        XCTAssertEqual(time, first)
        var spectrum1 = [Float](repeating: 0, count: 512)
        analyser.getFloatFrequencyData(&spectrum1)
        _ = try render(engine, frames: 1500, piece: 500)
        analyser.getFloatTimeDomainData(&time)
        let second = (0..<1024).map { sineSample(Int64(4500 - 1024 + $0), frequency: 1234.5, rate: 48000) }
        XCTAssertEqual(time, second)
        var spectrum = [Float](repeating: 0, count: 512)
        analyser.getFloatFrequencyData(&spectrum)
        let expected = try reference(tau: 0.8, blocks: [first, second])
        // Bins above -90 dB (below that a pure tone's Blackman sidelobes meet single-precision
        // FFT rounding, which numpy's double precision does not have).
        var worst = 0.0, compared = 0
        for k in 0..<512 where expected[k] > -90 {
            worst = max(worst, abs(Double(spectrum[k]) - expected[k]))
            compared += 1
        }
        print("AudioAnalyserNode vs numpy: worst \(worst) dB over \(compared) bins above -90 dB")
        XCTAssertGreaterThan(compared, 8)
        XCTAssertLessThan(worst, 0.01)

        var bytes = [UInt8](repeating: 0, count: 512)
        analyser.getByteFrequencyData(&bytes)
        for k in 0..<512 {
            let v = (255 / (analyser.maxDecibels - analyser.minDecibels) * (Double(spectrum[k]) - analyser.minDecibels)).rounded(.down)
            XCTAssertEqual(bytes[k], UInt8(max(0, min(255, v))), "bin \(k)")
        }
        var timeBytes = [UInt8](repeating: 0, count: 1024)
        analyser.getByteTimeDomainData(&timeBytes)
        for n in 0..<1024 {
            XCTAssertEqual(timeBytes[n], UInt8(max(0, min(255, (128 * (1 + Double(second[n]))).rounded(.down)))))
        }
    }

    /// EZAudioFFT's strongest bin and the interpolated dominant frequency of a 1234.5 Hz tone
    /// (bins 23.4375 Hz apart at fftSize 2048, 48 kHz).
    func testDominantFrequency() throws {
        let (engine, analyser) = try makeEngine()
        _ = try render(engine, frames: 4096, piece: 512)
        XCTAssertEqual(analyser.maxFrequencyIndex, 53)   // 1234.5 / 23.4375 = 52.67
        XCTAssertEqual(analyser.maxFrequency, 53 * 23.4375)
        XCTAssertEqual(analyser.frequency(atIndex: 10), 234.375)
        let dominant = try XCTUnwrap(analyser.dominantFrequency())
        print("AudioAnalyserNode: dominant \(dominant) Hz for 1234.5 Hz; max bin magnitude \(analyser.maxFrequencyMagnitude)")
        XCTAssertEqual(dominant, 1234.5, accuracy: 0.25 * 23.4375 / 10)
        XCTAssertGreaterThan(analyser.maxFrequencyMagnitude, 0)
    }

    /// Properties set while running take effect: smoothing 0 gives the unsmoothed spectrum;
    /// a new fftSize gives a new analysis of that size.
    func testPropertiesWhileRunning() throws {
        let (engine, analyser) = try makeEngine(fftSize: 512)
        _ = try render(engine, frames: 2048, piece: 512)
        analyser.smoothingTimeConstant = 0
        analyser.minDecibels = -120
        analyser.maxDecibels = -10
        var spectrum = [Float](repeating: 0, count: 256)
        analyser.getFloatFrequencyData(&spectrum)
        let block = (0..<512).map { sineSample(Int64(2048 - 512 + $0), frequency: 1234.5, rate: 48000) }
        let expected = try reference(tau: 0, blocks: [block])
        for k in 0..<256 where expected[k] > -90 { XCTAssertEqual(Double(spectrum[k]), expected[k], accuracy: 0.01, "bin \(k)") }
        analyser.fftSize = 4096
        XCTAssertEqual(analyser.frequencyBinCount, 2048)
        _ = try render(engine, frames: 8192, piece: 512)
        var time = [Float](repeating: 0, count: 4096)
        analyser.getFloatTimeDomainData(&time)
        XCTAssertEqual(time.last, sineSample(Int64(2048 + 8192 - 1), frequency: 1234.5, rate: 48000))
        XCTAssertEqual(try XCTUnwrap(analyser.dominantFrequency()), 1234.5, accuracy: 0.5)
    }

    /// An fftSize that Web Audio refuses is clamped and rounded to a power of two (in octaves),
    /// never a stop; the analysis then has that size.
    func testAnFFTSizeThatIsNotAPowerOfTwoIsRoundedAndNeverStops() throws {
        let (engine, analyser) = try makeEngine(fftSize: 1000)
        XCTAssertEqual(analyser.fftSize, 1024)
        for (asked, expected) in [(3000, 4096), (2800, 2048), (0, 32), (-5, 32), (Int.min, 32), (Int.max, 32768),
                                  (40000, 32768), (48, 64), (45, 32), (512, 512)] {
            analyser.fftSize = asked
            XCTAssertEqual(analyser.fftSize, expected, "fftSize = \(asked)")
            XCTAssertEqual(analyser.frequencyBinCount, expected / 2)
        }
        analyser.fftSize = 1000
        _ = try render(engine, frames: 4096, piece: 512)
        var data = [Float](repeating: 0, count: analyser.frequencyBinCount)
        analyser.getFloatFrequencyData(&data)
        XCTAssertEqual(data.count, 512)
        XCTAssertTrue(data.allSatisfy { !$0.isNaN })
        engine.stop()
    }
}
