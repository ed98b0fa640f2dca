// Tests of TimePitchNode's quality modes (R3 "finer", R2 "faster"): length, pitch against a sine, pitch mode chosen per use.
import AudioGraphCore
import AudioGraphTesting
import CRubberBand
import Foundation
import XCTest
@testable import AudioGraphNodes

extension TimePitchNodeTests {
    /// Cents between a measured frequency and the expected one.
    func cents(_ f: Double, from expected: Double) -> Double { 1200 * log2(f / expected) }

    /// At `rate` through `quality`: the 1 s, 440 Hz burst's audible length is 1 s / rate within
    /// `lengthAccuracy` frames (960: two 10 ms measuring windows; both engines' edges are soft); a steady 440 Hz
    /// sine's frequency (the spectral peak, zero-padded FFT, over 1 s from 0.2 s) is 440 Hz
    /// within `maximumCents`.
    func checkLengthAndPitch(_ quality: TimePitchQuality, rate: Double, maximumCents: Double, lengthAccuracy: Double = 960,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        let t = TimePitchNode(id: "tp", sampleRate: sr, quality: quality)
        try t.setParameter("rate", rate)
        let expected = Double(burstFrames) / rate
        let y = try render(t, frames: Int(expected) + 24000)
        XCTAssertEqual(Double(audibleLength(y)), expected, accuracy: lengthAccuracy, "\(quality) at rate \(rate): audible frames",
                       file: file, line: line)
        let sine = formulaSource("sine", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000)) }
        let u = TimePitchNode(id: "tp", sampleRate: sr, quality: quality)
        try u.setParameter("rate", rate)
        let g = try startedGraph([sine, u], "sine -> tp -> out")
        let z = renderFrames(g, frames: 57600, channels: 1)[0]
        let f = spectralPeak(Array(z[9600..<57600]), sampleRate: sr)
        XCTAssertEqual(cents(f, from: toneFrequency), 0, accuracy: maximumCents, "\(quality) at rate \(rate): \(f) Hz",
                       file: file, line: line)
    }

    /// The frequency of the largest bin of a Hann-windowed DFT evaluated on a 0.25 Hz grid
    /// from 400 to 480 Hz (direct sums with a rotating phasor: no FFT library needed).
    func spectralPeak(_ x: [Float], sampleRate: Double) -> Double {
        let n = x.count
        let v = (0..<n).map { Double(x[$0]) * (0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n - 1))) }
        var best = 0.0, bestPower = -1.0
        for k in 0...320 {
            let f = 400 + 0.25 * Double(k)
            let (c, s) = (cos(2 * Double.pi * f / sampleRate), -sin(2 * Double.pi * f / sampleRate))
            var pr = 1.0, pi = 0.0, re = 0.0, im = 0.0
            v.withUnsafeBufferPointer { v in
                for i in 0..<n {
                    re += v[i] * pr; im += v[i] * pi
                    (pr, pi) = (pr * c - pi * s, pr * s + pi * c)
                }
            }
            if re * re + im * im > bestPower { bestPower = re * re + im * im; best = f }
        }
        return best
    }

    func testFinerKeepsLengthAndPitchWithinTwoCents() throws {
        for rate in [0.5, 1.25, 2] { try checkLengthAndPitch(.finer, rate: rate, maximumCents: 2) }
    }

    /// R2 in real-time mode (ffmpeg's `rubberband` filter runs the same) spreads a steady tone's
    /// spectrum: its peak lies up to +29 cents off at rate 1.25 (ffmpeg's filter: the same,
    /// Docs/Performance.md "Time-stretch"); 40 cents is its bound here.
    func testFasterKeepsLengthAndPitchWithinItsBound() throws {
        for rate in [0.5, 1.25, 2] { try checkLengthAndPitch(.faster, rate: rate, maximumCents: 40) }
    }

    /// The two modes are different engines: their outputs differ, and `faster` is R2.
    func testTheQualityChoosesRubberbandsEngine() throws {
        let finer = TimePitchStretcher.options(quality: .finer, overlap: 8, consistentPitch: false)
        let faster = TimePitchStretcher.options(quality: .faster, overlap: 8, consistentPitch: false)
        XCTAssertEqual(finer & RubberBandOptionEngineFiner.rawValue, RubberBandOptionEngineFiner.rawValue)
        XCTAssertEqual(faster & RubberBandOptionEngineFiner.rawValue, 0)
        let a = try render(try { let t = TimePitchNode(id: "tp", sampleRate: sr, quality: .finer); try t.setParameter("rate", 1.25); return t }(),
                           frames: 9600)
        let b = try render(try { let t = TimePitchNode(id: "tp", sampleRate: sr, quality: .faster); try t.setParameter("rate", 1.25); return t }(),
                           frames: 9600)
        XCTAssertNotEqual(a, b)
    }

    /// Rubberband's always-on pitch resampler ("high consistency") only where the pitch may move:
    /// for an offline file render at 0 cents without automation it is off (R3 then skips the
    /// resampler: 16 % fewer instructions, the `rubberband` tool's default); with a pitch, pitch
    /// automation or live pitch changes it is on. Before the change every stretcher had it on
    /// (this test failed).
    func testThePitchResamplerRunsOnlyWhereThePitchMayMove() throws {
        func isConsistent(_ t: TimePitchNode) throws -> Bool {
            let g = try startedGraph([burst(), t], "tone -> tp -> out")
            _ = renderFrames(g, frames: 512, channels: 1)
            let k = try XCTUnwrap(t.kernel as? TimePitchKernel)
            return try XCTUnwrap(k.stretcher).options & RubberBandOptionPitchHighConsistency.rawValue != 0
        }
        func offline(pitch: Double = 0) throws -> TimePitchNode {
            let t = TimePitchNode(id: "tp", sampleRate: sr, livePitchChanges: false)
            try t.setParameter("rate", 1.25)
            try t.setParameter("pitch", pitch)
            return t
        }
        XCTAssertFalse(try isConsistent(try offline()))
        XCTAssertTrue(try isConsistent(try offline(pitch: 100)))
        XCTAssertTrue(try isConsistent(try timePitch(rate: 1.25)), "live pitch changes")
        let automated = try offline()
        try automated.setAutomation(try AutomationTimeline(events: [.setValue(value: 0, time: 0), .linearRamp(value: 300, time: 0.5)],
                                                           defaultValue: 0), for: "pitch")
        XCTAssertTrue(try isConsistent(automated))
    }

    /// A pitch set after start on a stretcher made at 0 cents (no always-on resampler) still
    /// shifts: 700 cents up, within 2 cents.
    func testAPitchSetWhilePlayingStillShiftsWithoutTheAlwaysOnResampler() throws {
        let src = formulaSource("tone", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000)) }
        let t = TimePitchNode(id: "tp", sampleRate: sr, livePitchChanges: false)
        try t.setParameter("rate", 1.25)
        let g = try startedGraph([src, t], "tone -> tp -> out")
        _ = renderFrames(g, frames: 9600, channels: 1)
        try t.setParameter("pitch", 700)
        let y = renderFrames(g, frames: 48000, channels: 1)[0]
        let f = try XCTUnwrap(SignalMeasurement.estimateFrequency(y[9600...], sampleRate: sr))
        XCTAssertEqual(cents(f, from: 440 * pow(2, 700.0 / 1200)), 0, accuracy: 2, "\(f) Hz")
    }

    /// `faster` takes the pitch at initialize: +700 cents shifts the sine (within R2's 40-cent
    /// bound), and a pitch set while playing changes nothing (R2 would allocate for it).
    func testFasterTakesThePitchAtInitialize() throws {
        let src = formulaSource("tone", channels: 1) { _, n in Float(0.5 * sin(2 * Double.pi * 400 * Double(n) / 48000)) }
        let t = TimePitchNode(id: "tp", sampleRate: sr, quality: .faster)
        try t.setParameter("pitch", 700)
        let g = try startedGraph([src, t], "tone -> tp -> out")
        let y = renderFrames(g, frames: 48000, channels: 1)[0]
        try t.setParameter("pitch", 0)
        let z = renderFrames(g, frames: 48000, channels: 1)[0]
        let expected = 400 * pow(2, 700.0 / 1200)
        let f = try XCTUnwrap(SignalMeasurement.estimateFrequency(y[9600...], sampleRate: sr))
        let g2 = try XCTUnwrap(SignalMeasurement.estimateFrequency(z[9600...], sampleRate: sr))
        XCTAssertEqual(cents(f, from: expected), 0, accuracy: 40, "\(f) Hz")
        XCTAssertEqual(cents(g2, from: expected), 0, accuracy: 40, "\(g2) Hz after the pitch was set to 0")
    }
}
