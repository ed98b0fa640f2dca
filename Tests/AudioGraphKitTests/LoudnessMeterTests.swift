// LoudnessMeter against the EBU Tech 3341/3342 test signals (generated here), the true-peak formula and pyloudnorm.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class LoudnessMeterTests: XCTestCase {
    static let rate = 48000.0

    /// Feeds `signal` in blocks of `block` frames (not a multiple of the meter's scratch size).
    static func measure(_ signal: [[Float]], mode: LoudnessMeter.Mode = .program, rate: Double = rate,
                        block: Int = 4801) throws -> LoudnessMeter {
        let meter = try LoudnessMeter(channelCount: signal.count, sampleRate: rate, mode: mode)
        let frames = signal[0].count
        let storage = signal.map { ch in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: ch.count)
            p.initialize(from: ch, count: ch.count)
            return p
        }
        defer { storage.forEach { $0.deallocate() } }
        var start = 0
        while start < frames {
            let n = min(block, frames - start)
            meter.add(storage.map { UnsafePointer($0 + start) }, frameCount: n)
            start += n
        }
        return meter
    }

    // MARK: EBU Tech 3341 (loudness), tolerance ±0.1 LU

    func testTech3341Cases1And2SteadySine() throws {
        for level in [-23.0, -33.0] {
            let signal = EBUTestSignals.sineSegments([(level, 20)])
            let program = try Self.measure(signal)
            XCTAssertEqual(program.integratedLoudness, level, accuracy: 0.1, "I of a \(level) dBFS stereo sine")
            let live = try Self.measure(signal, mode: .live)
            XCTAssertEqual(live.momentaryLoudness, level, accuracy: 0.1, "M")
            XCTAssertEqual(live.shortTermLoudness, level, accuracy: 0.1, "S")
            XCTAssertTrue(live.integratedLoudness.isNaN, "live mode measures no integrated loudness")
        }
    }

    func testTech3341Cases3And4Gating() throws {
        // Case 3: the relative gate drops the -36 dBFS parts; case 4: the absolute gate drops -72 too.
        let case3 = EBUTestSignals.sineSegments([(-36, 10), (-23, 60), (-36, 10)])
        XCTAssertEqual(try Self.measure(case3).integratedLoudness, -23, accuracy: 0.1, "case 3")
        let case4 = EBUTestSignals.sineSegments([(-72, 10), (-36, 10), (-23, 60), (-36, 10), (-72, 10)])
        XCTAssertEqual(try Self.measure(case4).integratedLoudness, -23, accuracy: 0.1, "case 4")
    }

    func testMonoIsOneFrontChannel() throws {
        // BS.1770: a mono sine at -23 dBFS has half the power of the same sine on both channels.
        let mono = try Self.measure(EBUTestSignals.sineSegments([(-23, 10)], channels: 1))
        XCTAssertEqual(mono.integratedLoudness, -23 - 10 * log10(2.0), accuracy: 0.1)
    }

    // MARK: EBU Tech 3342 (loudness range), tolerance ±1 LU

    func testTech3342LoudnessRange() throws {
        let cases: [(segments: [(dbfs: Double, seconds: Double)], range: Double)] = [
            ([(-20, 20), (-30, 20)], 10),
            ([(-20, 20), (-15, 20)], 5),
            ([(-40, 20), (-20, 20)], 20),
            ([(-50, 20), (-35, 20), (-20, 20), (-35, 20), (-50, 20)], 15),
        ]
        for (i, c) in cases.enumerated() {
            let meter = try Self.measure(EBUTestSignals.sineSegments(c.segments))
            XCTAssertEqual(meter.loudnessRange, c.range, accuracy: 1, "Tech 3342 case \(i + 1)")
        }
        // A steady sine has no range.
        XCTAssertEqual(try Self.measure(EBUTestSignals.sineSegments([(-23, 20)])).loudnessRange, 0, accuracy: 0.1)
    }

    // MARK: True peak

    func testTruePeakOfASineAtAQuarterOfTheRateBetweenSamples() throws {
        // sin(π/2·n + π/4): every sample is ±1/√2 (-3.01 dBFS), the peaks of 1.0 (0 dBTP) fall between samples.
        let signal = EBUTestSignals.sineSegments([(0, 2)], frequency: Self.rate / 4, phase: .pi / 4)
        let meter = try Self.measure(signal)
        XCTAssertEqual(meter.truePeakDecibels, 0, accuracy: 0.2, "true peak: the sine's amplitude")
        let samplePeak = signal[0].withUnsafeBufferPointer { LevelMeter(channels: [$0.baseAddress!], frameCount: $0.count) }.peakDecibels
        XCTAssertEqual(samplePeak, 20 * log10(0.5.squareRoot()), accuracy: 0.01, "sample peak")
        XCTAssertGreaterThan(meter.truePeakDecibels, samplePeak + 2.8)
        // Tech 3341 case 1 signal: true peak equals the peak of a slow sine (-23 dBFS).
        XCTAssertEqual(try Self.measure(EBUTestSignals.sineSegments([(-23, 5)])).truePeakDecibels, -23, accuracy: 0.2)
    }

    // MARK: Output and bad input

    func testSummaryLineAndSilence() throws {
        let meter = try Self.measure(EBUTestSignals.sineSegments([(-23, 5)]))
        XCTAssertTrue(meter.summary.hasPrefix("integrated -23.0 LUFS, range "), meter.summary)
        XCTAssertTrue(meter.summary.hasSuffix(" dBTP"), meter.summary)
        let silence = try Self.measure([[Float](repeating: 0, count: 48000), [Float](repeating: 0, count: 48000)])
        XCTAssertEqual(silence.integratedLoudness, -.infinity)
        XCTAssertEqual(silence.truePeakDecibels, -.infinity)
        XCTAssertTrue(silence.summary.hasPrefix("integrated -inf LUFS"), silence.summary)
        let live = try Self.measure(EBUTestSignals.sineSegments([(-33, 4)]), mode: .live)
        XCTAssertEqual(live.liveLine, "M  -33.0 LUFS  S  -33.0 LUFS")
    }

    func testUnsupportedFormatsThrow() {
        for (channels, rate) in [(0, 48000.0), (65, 48000), (2, 44100.5), (2, 8), (2, .nan), (2, 3e6)] {
            XCTAssertThrowsError(try LoudnessMeter(channelCount: channels, sampleRate: rate), "\(channels) ch at \(rate) Hz") {
                guard case let .unsupportedFormat(c, r) = $0 as? LoudnessMeterError else { return XCTFail("\($0)") }
                XCTAssertEqual(c, channels)
                XCTAssertTrue(r == rate || (r.isNaN && rate.isNaN))
            }
        }
    }

    // MARK: An independent implementation

    func testIntegratedLoudnessAgreesWithPyloudnorm() throws {
        // Noise at changing levels, different on the two channels, at 44.1 kHz: pyloudnorm
        // (numpy/scipy, its own K-weighting and gating) reads the same WAV.
        let rate = 44100.0
        var generator = SystemRandomNumberGenerator()
        let frames = Int(rate * 12)
        let channels: [[Float]] = (0..<2).map { c in
            (0..<frames).map { i in
                let level = i < frames / 3 ? 0.3 : (i < 2 * frames / 3 ? 0.02 : 0.1)
                return Float(Double.random(in: -1...1, using: &generator) * level * (c == 0 ? 1 : 0.5))
            }
        }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("noise.wav").path
        try TestFiles.writeSoundFile(path, channels, sampleRate: rate)
        let ours = try Self.measure(channels, rate: rate).integratedLoudness
        let script = """
            import sys, soundfile as sf, pyloudnorm as pyln
            d, sr = sf.read(sys.argv[1], dtype='float64', always_2d=True)
            print(repr(float(pyln.Meter(sr).integrated_loudness(d))))
            """
        let text = try ReferenceScript.run(code: script, arguments: [path]).text
        let theirs = try XCTUnwrap(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), text)
        XCTAssertEqual(ours, theirs, accuracy: 0.1, "libebur128 \(ours) LUFS, pyloudnorm \(theirs) LUFS")
    }
}
