// Tests of Resampler (libsoxr and libsamplerate): tone level and THD+N by least-squares fit, request-size independence.

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

    func testLibsamplerateReadDoesNotAllocate() throws {
        guard RealTimeScaffold.interposerIsActive else { throw XCTSkip("allocation counter not linked") }
        let source = SineSource(rate: 48000, frequency: 1000, amplitude: 0.5)
        let rs = try Resampler(channelCount: 2, inputSampleRate: 48000, outputSampleRate: 44100, quality: .sincBest,
                               provider: source.provide)
        let bufs = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 512) }
        defer { bufs.forEach { $0.deallocate() } }
        let counts = bufs.withUnsafeBufferPointer { b in
            _ = rs.read(into: b, frameCount: 512)   // warm up
            return RealTimeScaffold.count { for _ in 0..<50 { _ = rs.read(into: b, frameCount: 512) } }.counts
        }
        XCTAssertNil(counts.violation)
    }

    /// libsoxr (`best`) sets itself up and grows its FIFOs in its first blocks; the resampler
    /// primes it at init (control thread), so 2 000 reads of 512 frames from the very first one
    /// allocate nothing and lock nothing, at the ratios the graphs use.
    func testSoxrDoesNotAllocateFromTheFirstRead() throws {
        guard RealTimeScaffold.interposerIsActive else { throw XCTSkip("allocation counter not linked") }
        for (from, to) in [(44100.0, 48000.0), (48000.0, 44100.0), (22050.0, 48000.0), (48000.0, 8000.0), (96000.0, 44100.0)] {
            let source = SineSource(rate: from, frequency: 1000, amplitude: 0.5)
            let rs = try Resampler(channelCount: 2, inputSampleRate: from, outputSampleRate: to, provider: source.provide)
            XCTAssertTrue(rs.quality.usesSoxr)
            let bufs = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 512) }
            defer { bufs.forEach { $0.deallocate() } }
            var allocations = 0, locks = 0
            bufs.withUnsafeBufferPointer { b in
                for _ in 0..<2000 {
                    let (_, sliceCounts) = RealTimeScaffold.count { _ = rs.read(into: b, frameCount: 512) }
                    allocations += Int(sliceCounts.allocations)
                    locks += Int(sliceCounts.locks)
                }
            }
            XCTAssertEqual(allocations, 0, "\(from) -> \(to): allocations while converting")
            XCTAssertEqual(locks, 0, "\(from) -> \(to): locks while converting")
        }
    }

    /// The primed engine is time-aligned like a fresh one: a 1 kHz sine's fitted phase at the
    /// output equals the input's (output frame k is input time k / ratio) within 0.001 rad.
    func testSoxrOutputIsTimeAligned() throws {
        for (from, to) in [(44100.0, 48000.0), (48000.0, 44100.0), (22050.0, 48000.0)] {
            let r = try convert(from: from, to: to, total: Int(to / 2), requests: [512])
            let seg = r.out[0][2000..<(Int(to / 2) - 100)].map(Double.init)
            let fit = ToneFit(seg, sampleRate: to, frequencies: [1000])
            // The sine of the source is 0.5 sin(2π·1000·t); the segment starts at t = 2000 / to.
            let expected = 2 * Double.pi * 1000 * 2000 / to
            let tone = fit.tones[0]
            var phaseError = (tone.phase - expected).truncatingRemainder(dividingBy: 2 * Double.pi)
            if phaseError > Double.pi { phaseError -= 2 * Double.pi }
            if phaseError < -Double.pi { phaseError += 2 * Double.pi }
            XCTAssertEqual(tone.amplitude, 0.5, accuracy: 0.0005, "\(from) -> \(to)")
            XCTAssertEqual(phaseError, 0, accuracy: 0.001, "\(from) -> \(to): phase \(tone.phase) rad, expected \(expected)")
        }
    }

    /// The gain in dB at `frequency` through a 48 kHz → 44.1 kHz conversion (input amplitude
    /// 0.5, least-squares fit of the output tone at the same frequency).
    private func gainDB(_ quality: Resampler.Quality, frequency: Double) throws -> Double {
        let source = SineSource(rate: 48000, frequency: frequency, amplitude: 0.5)
        let rs = try Resampler(channelCount: 1, inputSampleRate: 48000, outputSampleRate: 44100, quality: quality,
                               provider: source.provide)
        var y = [Float](repeating: 0, count: 13_230)
        y.withUnsafeMutableBufferPointer { b in
            [b.baseAddress!].withUnsafeBufferPointer { _ = rs.read(into: $0, frameCount: b.count) }
        }
        let fit = ToneFit(y[2000...].map(Double.init), sampleRate: 44100, frequencies: [frequency])
        return SignalMeasurement.dBFS(fit.tones[0].amplitude) - SignalMeasurement.dBFS(0.5)
    }

    /// Every quality's figures, measured (48 kHz → 44.1 kHz): THD+N of a 1 kHz tone at -6 dBFS
    /// (fit residual), passband deviation from the input level (the sine's known amplitude)
    /// over 20 Hz ... 20 kHz, and the −3 dB point (bisection). These are the figures
    /// Docs/Nodes.md quotes. `best` (libsoxr) must be at least as good as libsamplerate's best
    /// in THD+N and -3 dB point, and flat within 0.01 dB to 20 kHz.
    func testQualityFiguresOfEveryConverter() throws {
        var figures: [Resampler.Quality: (thdn: Double, ripple: Double, minus3: Double)] = [:]
        let grid: [Double] = [20, 100, 1000, 5000, 10_000, 15_000, 18_000, 19_000, 19_500, 20_000]
        for quality in Resampler.Quality.allCases {
            let r = try convert(from: 48000, to: 44100, quality: quality, total: 22050, requests: [441])
            let fit = ToneFit(r.out[0][2000..<22000].map(Double.init), sampleRate: 44100, frequencies: [1000])
            let ripple = try grid.map { abs(try gainDB(quality, frequency: $0)) }.max()!
            var lo = 1000.0, hi = 22_000.0
            if try gainDB(quality, frequency: hi) > -3 {
                lo = hi
            } else {
                for _ in 0..<14 {
                    let mid = (lo + hi) / 2
                    if try gainDB(quality, frequency: mid) > -3 { lo = mid } else { hi = mid }
                }
            }
            figures[quality] = (fit.thdPlusNoiseDB, ripple, lo)
            print(String(format: "quality %@: THD+N %.1f dB, passband deviation to 20 kHz %.4f dB, -3 dB at %.0f Hz (%.3f of Nyquist)",
                         quality.rawValue, fit.thdPlusNoiseDB, ripple, lo, lo / 22050))
        }
        let best = figures[.best]!, sinc = figures[.sincBest]!
        XCTAssertLessThanOrEqual(best.thdn, sinc.thdn, "libsoxr's THD+N is not at least as low as SINC_BEST's")
        // SINC_BEST is flatter below 20 kHz (~1e-6 dB against libsoxr's ~0.001 dB roll-off
        // allowance); both are far below audibility, and libsoxr's passband reaches further.
        XCTAssertLessThan(best.ripple, 0.01, "libsoxr's passband deviates by more than its 0.01 dB allowance")
        XCTAssertGreaterThanOrEqual(best.minus3, sinc.minus3, "libsoxr's -3 dB point is below SINC_BEST's")
        // The sinc converters are clean and flat to 20 kHz; linear and zero-order hold are not.
        for q in [Resampler.Quality.best, .sincBest] {
            XCTAssertLessThan(figures[q]!.thdn, -90, "\(q)")
            XCTAssertLessThan(figures[q]!.ripple, 0.1, "\(q)")
        }
        XCTAssertGreaterThan(figures[.zeroOrderHold]!.thdn, figures[.linear]!.thdn)
    }

    /// libsoxr converts much faster than libsamplerate's best (issue 9: SINC_BEST runs at ~10x
    /// real time here). 10 s of stereo, 44.1 kHz → 48 kHz, timed in this process.
    func testSoxrIsFasterThanSincBest() throws {
        func seconds(_ quality: Resampler.Quality) throws -> Double {
            let start = Date()
            let r = try convert(from: 44100, to: 48000, quality: quality, channels: 2, total: 480_000, requests: [512])
            XCTAssertEqual(r.real, 480_000)
            return Date().timeIntervalSince(start)
        }
        let soxr = try seconds(.best), sinc = try seconds(.sincBest)
        print(String(format: "10 s stereo 44.1k->48k: libsoxr VHQ %.3f s (%.0fx real time), SINC_BEST %.3f s (%.0fx real time)",
                     soxr, 10 / soxr, sinc, 10 / sinc))
        XCTAssertLessThan(soxr * 2, sinc)
    }
}
