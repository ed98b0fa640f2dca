// Tests of Resampler (libsamplerate): tone level and THD+N by least-squares fit, request-size independence.

import CAllocationCounter
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class ResamplerTests: XCTestCase {

    /// A sine source at `rate` (channel c has amplitude amp/(c+1)) counting the frames it gave.
    final class SineSource {
        let rate: Double, frequency: Double, amplitude: Double
        var frame = 0
        var limit: Int?
        init(rate: Double, frequency: Double, amplitude: Double, limit: Int? = nil) {
            self.rate = rate; self.frequency = frequency; self.amplitude = amplitude; self.limit = limit
        }
        func provide(_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, _ count: Int) -> Int {
            let n = limit.map { min(count, $0 - frame) } ?? count
            for i in 0..<n {
                let v = amplitude * sin(2 * Double.pi * frequency * Double(frame + i) / rate)
                for c in 0..<channels.count { channels[c][i] = Float(v / Double(c + 1)) }
            }
            frame += n
            return n
        }
    }

    /// Converts with requests of the given sizes (cycled) until `total` frames are out.
    func convert(from inRate: Double, to outRate: Double, quality: Resampler.Quality = .best, channels: Int = 1,
                 total: Int, requests: [Int], limit: Int? = nil) throws -> (out: [[Float]], real: Int, pulled: Int) {
        let source = SineSource(rate: inRate, frequency: 1000, amplitude: 0.5, limit: limit)
        let rs = try Resampler(channelCount: channels, inputSampleRate: inRate, outputSampleRate: outRate,
                               quality: quality, provider: source.provide)
        let bufs = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: total) }
        defer { bufs.forEach { $0.deallocate() } }
        var done = 0, k = 0, real = 0
        while done < total {
            let n = min(requests[k % requests.count], total - done)
            k += 1
            let ptrs = bufs.map { $0 + done }
            real += ptrs.withUnsafeBufferPointer { rs.read(into: $0, frameCount: n) }
            done += n
        }
        return (bufs.map { Array(UnsafeBufferPointer(start: $0, count: total)) }, real, source.frame)
    }

    func checkTone(_ y: [Float], rate: Double, file: StaticString = #filePath, line: UInt = #line) -> (Double, Double) {
        // Skip the converter's start-up (filter fill) and keep whole-ish seconds.
        let segment = y[2000..<(y.count - 100)].map(Double.init)
        let fit = ToneFit(segment, sampleRate: rate, frequencies: [1000])
        let rms = (segment.reduce(0) { $0 + $1 * $1 } / Double(segment.count)).squareRoot()
        let levelError = SignalMeasurement.dBFS(rms) - SignalMeasurement.dBFS(0.5 / 2.0.squareRoot())
        let amplitudeError = SignalMeasurement.dBFS(fit.tones[0].amplitude) - SignalMeasurement.dBFS(0.5)
        XCTAssertEqual(levelError, 0, accuracy: 0.01, "RMS level", file: file, line: line)
        XCTAssertEqual(amplitudeError, 0, accuracy: 0.01, "tone amplitude", file: file, line: line)
        return (levelError, fit.thdPlusNoiseDB)
    }

    func testBestUpsample44100To48000() throws {
        let r = try convert(from: 44100, to: 48000, total: 48000, requests: [512])
        let (level, thdn) = checkTone(r.out[0], rate: 48000)
        print("Resampler best 44.1k->48k: level error \(level) dB, THD+N \(thdn) dB")
        XCTAssertLessThan(thdn, -90, "THD+N \(thdn) dB, level error \(level) dB")
        XCTAssertEqual(r.real, 48000)
    }

    func testBestDownsample48000To44100() throws {
        let r = try convert(from: 48000, to: 44100, total: 44100, requests: [441])
        let (level, thdn) = checkTone(r.out[0], rate: 44100)
        print("Resampler best 48k->44.1k: level error \(level) dB, THD+N \(thdn) dB")
        XCTAssertLessThan(thdn, -90, "THD+N \(thdn) dB, level error \(level) dB")
    }

    func testOtherQualitiesKeepTheTone() throws {
        // Measured separately: sinc qualities are clean, linear and zero-order hold are not.
        let limits: [Resampler.Quality: Double] = [.medium: -90, .fastest: -80, .linear: -30, .zeroOrderHold: -20]
        for quality in [Resampler.Quality.medium, .fastest, .linear, .zeroOrderHold] {
            let r = try convert(from: 44100, to: 48000, quality: quality, total: 24000, requests: [300])
            let seg = r.out[0][2000..<23900].map(Double.init)
            let fit = ToneFit(seg, sampleRate: 48000, frequencies: [1000])
            XCTAssertEqual(SignalMeasurement.dBFS(fit.tones[0].amplitude) - SignalMeasurement.dBFS(0.5), 0, accuracy: quality == .zeroOrderHold ? 0.2 : 0.05, "\(quality)")
            XCTAssertLessThan(fit.thdPlusNoiseDB, limits[quality]!, "\(quality)")
        }
    }

    func testOutputIdenticalWhateverTheRequestSizes() throws {
        let reference = try convert(from: 44100, to: 48000, channels: 2, total: 20000, requests: [1])
        for requests in [[64], [512], [4096], [7, 300, 1, 4096, 33]] {
            let r = try convert(from: 44100, to: 48000, channels: 2, total: 20000, requests: requests)
            for c in 0..<2 {
                XCTAssertTrue(zip(reference.out[c], r.out[c]).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(requests)")
            }
            XCTAssertEqual(r.pulled, reference.pulled)
        }
        // Channels are converted independently: channel 1 carries half the amplitude.
        let fit0 = ToneFit(reference.out[0][2000..<19000], sampleRate: 48000, frequencies: [1000])
        let fit1 = ToneFit(reference.out[1][2000..<19000], sampleRate: 48000, frequencies: [1000])
        XCTAssertEqual(fit1.tones[0].amplitude / fit0.tones[0].amplitude, 0.5, accuracy: 1e-5)
    }

    func testEndOfInputDrainsThenZeroFills() throws {
        // 4410 input frames at 44.1 kHz are 0.1 s: about 4800 output frames, then silence.
        let r = try convert(from: 44100, to: 48000, total: 8000, requests: [1000], limit: 4410)
        XCTAssertEqual(Double(r.real), 4800, accuracy: 2)
        XCTAssertTrue(r.out[0][r.real...].allSatisfy { $0 == 0 })
        XCTAssertEqual(r.pulled, 4410)
    }

    func testInvalidArguments() {
        XCTAssertThrowsError(try Resampler(channelCount: 0, inputSampleRate: 48000, outputSampleRate: 44100) { _, _ in 0 })
        XCTAssertThrowsError(try Resampler(channelCount: 1, inputSampleRate: 48000, outputSampleRate: 10) { _, _ in 0 })
        XCTAssertThrowsError(try Resampler(channelCount: 1, inputSampleRate: 0, outputSampleRate: 48000) { _, _ in 0 })
    }

    func testReadDoesNotAllocate() throws {
        guard ag_counter_is_active() != 0 else { throw XCTSkip("allocation counter not linked") }
        let source = SineSource(rate: 48000, frequency: 1000, amplitude: 0.5)
        let rs = try Resampler(channelCount: 2, inputSampleRate: 48000, outputSampleRate: 44100, provider: source.provide)
        let bufs = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 512) }
        defer { bufs.forEach { $0.deallocate() } }
        bufs.withUnsafeBufferPointer { b in
            _ = rs.read(into: b, frameCount: 512)   // warm up
            ag_counter_reset()
            ag_counter_track_this_thread(1)
            for _ in 0..<50 { _ = rs.read(into: b, frameCount: 512) }
            ag_counter_track_this_thread(0)
        }
        XCTAssertEqual(ag_counter_allocations(), 0)
        XCTAssertEqual(ag_counter_locks(), 0)
    }
}
