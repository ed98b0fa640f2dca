// Tests of DelayLine against the delay recurrence (with its one-pole low-pass) written out here.

import Foundation
import XCTest
@testable import AudioGraphNodes

final class DelayLineTests: XCTestCase {
    let sr = 48000.0

    /// The spec's recurrence in Double: d[n] = x(n-D) + fb*lp(d(n-max(D,1))), y = (1-w)x + w d,
    /// values at fractional times by linear interpolation, zero before the start.
    func reference(_ x: [Double], delayFrames D: Double, feedback fb: Double, wet: Double,
                   cutoff: Double? = nil) -> [Double] {
        let n = x.count
        var d = [Double](repeating: 0, count: n)
        var y = [Double](repeating: 0, count: n)
        func at(_ v: [Double], _ t: Double) -> Double {   // v at fractional index t
            let k = Int(t.rounded(.down)), f = t - Double(k)
            let v0 = k >= 0 && k < v.count ? v[k] : 0
            let v1 = k + 1 >= 0 && k + 1 < v.count ? v[k + 1] : 0
            return f == 0 ? v0 : v0 * (1 - f) + v1 * f
        }
        let a = cutoff.map { $0 >= sr / 2 ? 1 : 1 - exp(-2 * Double.pi * $0 / sr) } ?? 1
        var s = 0.0
        for i in 0..<n {
            let u = at(d, Double(i) - max(D, 1))
            s = s + a * (u - s)
            d[i] = at(x, Double(i) - D) + fb * s
            y[i] = (1 - wet) * x[i] + wet * d[i]
        }
        return y
    }

    /// Runs `x` (mono, or channel 1 = -x) through a DelayLine in slices, calling `changes` at frames.
    func run(_ x: [Double], line: DelayLine, slice: Int, channels: Int = 1,
             changes: [(Int, (DelayLine) -> Void)] = []) -> [[Float]] {
        let n = x.count
        let ins = (0..<channels).map { c -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            for i in 0..<n { p[i] = Float(c == 0 ? x[i] : -x[i]) }
            return p
        }
        let outs = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: n) }
        defer { ins.forEach { $0.deallocate() }; outs.forEach { $0.deallocate() } }
        var done = 0, pending = changes
        while done < n {
            while let first = pending.first, first.0 == done { first.1(line); pending.removeFirst() }
            var c = min(slice, n - done)
            if let first = pending.first { c = min(c, first.0 - done) }
            let ip = ins.map { UnsafePointer($0 + done) }, op = outs.map { $0 + done }
            ip.withUnsafeBufferPointer { ib in op.withUnsafeBufferPointer { ob in
                line.process(input: ib, output: ob, frameCount: c)
            } }
            done += c
        }
        return outs.map { Array(UnsafeBufferPointer(start: $0, count: n)) }
    }

    func impulses(_ n: Int, at positions: [Int] = [0]) -> [Double] {
        var x = [Double](repeating: 0, count: n)
        for p in positions { x[p] = 1 }
        return x
    }

    func assertClose(_ y: [Float], _ ref: [Double], _ tol: Double, _ what: String,
                     file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(y.count, ref.count)
        var worst = 0.0, at = 0
        for i in 0..<y.count where abs(Double(y[i]) - ref[i]) > worst { worst = abs(Double(y[i]) - ref[i]); at = i }
        XCTAssertLessThanOrEqual(worst, tol, "\(what): max error \(worst) at frame \(at)", file: file, line: line)
    }

    func testImpulsePositiveFeedback() {
        let x = impulses(4800)
        let line = DelayLine(sampleRate: sr, maximumChannelCount: 2, delayTime: 0.01, feedback: 50,
                             lowPassCutoff: sr / 2, wetDryMix: 100)
        let y = run(x, line: line, slice: 256, channels: 2)
        // Echoes every 480 frames: 1, 0.5, 0.25, ... and nothing in between.
        for k in 1..<10 {
            XCTAssertEqual(Double(y[0][480 * k]), pow(0.5, Double(k - 1)), accuracy: 1e-7, "echo \(k)")
            XCTAssertEqual(Double(y[1][480 * k]), -pow(0.5, Double(k - 1)), accuracy: 1e-7, "echo \(k)")
        }
        assertClose(y[0], reference(x, delayFrames: 480, feedback: 0.5, wet: 1), 1e-7, "positive feedback")
    }

    func testImpulseNegativeFeedback() {
        let x = impulses(4000, at: [3])
        let line = DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: 0.005, feedback: -70,
                             lowPassCutoff: 30000, wetDryMix: 100)
        let y = run(x, line: line, slice: 100)[0]
        for k in 1..<8 { XCTAssertEqual(Double(y[3 + 240 * k]), pow(-0.7, Double(k - 1)), accuracy: 1e-6) }
        assertClose(y, reference(x, delayFrames: 240, feedback: -0.7, wet: 1), 1e-6, "negative feedback")
    }

    func testWetDryMixOnSine() {
        // The conformance case's numbers: D = 120 frames, feedback 25 %, wet 40 %.
        let x = (0..<24000).map { 0.5 * sin(2 * Double.pi * 500 * Double($0) / sr) }
        let line = DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: 0.0025, feedback: 25,
                             lowPassCutoff: 24000, wetDryMix: 40)
        let y = run(x, line: line, slice: 512)[0]
        assertClose(y, reference(x, delayFrames: 120, feedback: 0.25, wet: 0.4), 2e-7, "wet/dry")
        XCTAssertEqual(Double(y[10]), 0.6 * x[10], accuracy: 1e-7)   // before the first echo: 60 % dry
    }

    func testFeedbackLowPass() {
        let x = impulses(9600)
        let cutoff = 2000.0
        let line = DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: 0.02, feedback: 80,
                             lowPassCutoff: cutoff, wetDryMix: 100)
        let y = run(x, line: line, slice: 333)[0]
        let ref = reference(x, delayFrames: 960, feedback: 0.8, wet: 1, cutoff: cutoff)
        assertClose(y, ref, 1e-6, "low-passed feedback")
        // The second echo is the first one low-passed: its peak is a*0.8, not 0.8.
        let a = 1 - exp(-2 * Double.pi * cutoff / sr)
        XCTAssertEqual(Double(y[1920]), 0.8 * a, accuracy: 1e-6)
        // Cutoff off (>= sampleRate/2) is the identity: the second echo is exactly 0.8.
        let off = run(x, line: DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: 0.02, feedback: 80,
                                         lowPassCutoff: sr / 2, wetDryMix: 100), slice: 333)[0]
        XCTAssertEqual(Double(off[1920]), 0.8, accuracy: 1e-7)
    }

    func testFractionalDelay() {
        let x = (0..<6000).map { sin(Double($0) * 0.05) * exp(-Double($0) / 3000) }
        let seconds = 100.25 / sr
        let line = DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: seconds, feedback: 30,
                             lowPassCutoff: sr / 2, wetDryMix: 70)
        let y = run(x, line: line, slice: 64)[0]
        assertClose(y, reference(x, delayFrames: seconds * sr, feedback: 0.3, wet: 0.7), 1e-6, "fractional")
        // One impulse: the echo is split 0.75 / 0.25 over frames 100 and 101.
        let imp = run(impulses(300), line: DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: seconds,
                                                     feedback: 0, lowPassCutoff: sr / 2, wetDryMix: 100), slice: 64)[0]
        XCTAssertEqual(imp[100], 0.75, accuracy: 1e-7)
        XCTAssertEqual(imp[101], 0.25, accuracy: 1e-7)
    }

    func testZeroDelayWithoutFeedbackIsIdentity() {
        let x = (0..<1000).map { sin(Double($0) * 0.3) }
        let y = run(x, line: DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: 0, feedback: 0,
                                       lowPassCutoff: sr / 2, wetDryMix: 100), slice: 64)[0]
        for i in 0..<1000 { XCTAssertEqual(Double(y[i]), x[i], accuracy: 1e-7) }
    }

    /// A delay change 100 ms -> 37 ms on a 500 Hz tone (wet only): switching taps instantly jumps
    /// by ~0.9; the crossfade keeps each sample-to-sample change within the tone's own.
    func testDelayTimeChangeDoesNotClick() {
        let n = 48000, change = 24000 + 7
        let x = (0..<n).map { 0.5 * sin(2 * Double.pi * 500 * Double($0) / sr) }
        let line = DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: 0.1, feedback: 0,
                             lowPassCutoff: sr / 2, wetDryMix: 100)
        let y = run(x, line: line, slice: 128, changes: [(change, { $0.setDelayTime(0.037) })])[0]
        func maxStep(_ r: Range<Int>) -> Double { r.map { abs(Double(y[$0]) - Double(y[$0 - 1])) }.max()! }
        let steady = maxStep(6000..<change)
        XCTAssertLessThanOrEqual(maxStep(change..<(change + 2000)), steady * 1.01)
        // An instant switch would have jumped from x(change-1-4800) to x(change-1776).
        let instantJump = abs(x[change - 1776] - x[change - 1 - 4800])
        XCTAssertGreaterThan(instantJump, 10 * steady)
        // After the 10 ms crossfade the output is the input 37 ms (1776 frames) late.
        for i in (change + 480)..<n { XCTAssertEqual(Double(y[i]), x[i - 1776], accuracy: 1e-6) }
    }

    func testBitIdenticalForAnySliceSize() {
        var seed: UInt64 = 99
        let x: [Double] = (0..<30000).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 11) / Double(1 << 53) - 0.5
        }
        func render(_ slice: Int) -> [[Float]] {
            let line = DelayLine(sampleRate: sr, maximumChannelCount: 2, delayTime: 0.0123, feedback: 60,
                                 lowPassCutoff: 5000, wetDryMix: 50)
            return run(x, line: line, slice: slice, channels: 2, changes: [
                (7001, { $0.setDelayTime(0.05); $0.setFeedback(-40); $0.setLowPassCutoff(800) }),
                (7200, { $0.setDelayTime(0.0005); $0.setWetDryMix(90) }),   // pending until the fade ends
                (20000, { $0.setWetDryMix(10, rampFrames: 0); $0.setFeedback(95, rampFrames: 3000) }),
            ])
        }
        let reference = render(1)
        for slice in [64, 512, 4096] {
            let y = render(slice)
            for c in 0..<2 {
                XCTAssertTrue(zip(reference[c], y[c]).allSatisfy { $0.bitPattern == $1.bitPattern }, "slice \(slice)")
            }
        }
    }

    /// The steady loop (nothing glides) gives the general per-sample loop's samples bit for bit:
    /// whole and fractional delays, with and without the feedback low-pass, positive and negative
    /// feedback.
    func testSteadyLoopMatchesTheGeneralLoopBitForBit() {
        var seed: UInt64 = 5
        let x: [Double] = (0..<6000).map { i in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return i < 3000 ? Double(seed >> 11) / Double(1 << 53) - 0.5 : 0
        }
        for (delay, feedback, cutoff) in [(0.01, 50.0, 15000.0), (0.0123456, -70.0, 3000.0), (0.001, 90.0, 30000.0),
                                          (0.0, 0.0, 24000.0)] {
            func render(general: Bool) -> [[Float]] {
                let line = DelayLine(sampleRate: sr, maximumChannelCount: 2, delayTime: delay, feedback: feedback,
                                     lowPassCutoff: cutoff, wetDryMix: 40)
                line.testOnly_alwaysGeneralLoop = general
                return run(x, line: line, slice: 256, channels: 2)
            }
            let steady = render(general: false), general = render(general: true)
            for c in 0..<2 {
                XCTAssertEqual(steady[c].map(\.bitPattern), general[c].map(\.bitPattern), "delay \(delay) channel \(c)")
            }
            if feedback != 0 { XCTAssertNotEqual(steady[0][5000], 0, "delay \(delay): echoes reach the tail") }
        }
    }

    /// Whole-frame taps take the steady loop that walks the ring with plain pointers, cut where
    /// an index wraps: at 1 kHz the ring holds 2048 frames, so 9000 frames wrap it four times,
    /// in slices of 97 that straddle the wrap. Bit for bit the general loop's output, with and
    /// without the low-pass.
    func testWholeFrameTapsAcrossTheRingsWrapMatchTheGeneralLoopBitForBit() {
        let rate = 1000.0
        var seed: UInt64 = 11
        let x: [Double] = (0..<9000).map { i in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return i < 7000 ? Double(seed >> 11) / Double(1 << 53) - 0.5 : 0
        }
        // Cutoff at Nyquist (500 Hz here): no low-pass, the four-frames-at-a-time loop, whose
        // feedback reads must be at least four frames back (2, 3 frames: the scalar loop).
        for (delay, feedback, cutoff) in [(0.25, 70.0, 500.0), (0.003, -50.0, 300.0), (0.0, 30.0, 200.0), (1.999, 60.0, 100.0),
                                          (0.002, 80.0, 500.0), (0.003, -90.0, 500.0), (0.004, 85.0, 500.0),
                                          (0.005, -60.0, 600.0), (0.123, 95.0, 500.0)] {
            // One channel (a mono delay's own loop), a pair, and a pair plus one.
            for channels in 1...3 {
                func render(general: Bool) -> [[Float]] {
                    let line = DelayLine(sampleRate: rate, maximumChannelCount: channels, delayTime: delay, feedback: feedback,
                                         lowPassCutoff: cutoff, wetDryMix: 60)
                    XCTAssertEqual(line.capacity, 2048)
                    line.testOnly_alwaysGeneralLoop = general
                    return run(x, line: line, slice: 97, channels: channels)
                }
                let steady = render(general: false), general = render(general: true)
                for c in 0..<channels {
                    XCTAssertEqual(steady[c].map(\.bitPattern), general[c].map(\.bitPattern),
                                   "delay \(delay), \(channels) channels: channel \(c)")
                }
            }
            let steady = run(x, line: DelayLine(sampleRate: rate, maximumChannelCount: 2, delayTime: delay, feedback: feedback,
                                                lowPassCutoff: cutoff, wetDryMix: 60), slice: 97, channels: 2)
            if delay >= 0.25 { XCTAssertNotEqual(steady[0][8500], 0, "delay \(delay): echoes past the input's end") }
        }
    }

    func testParameterGlidesSettleOnTargets() {
        let line = DelayLine(sampleRate: sr, maximumChannelCount: 1, delayTime: 0.001, feedback: 0,
                             lowPassCutoff: sr / 2, wetDryMix: 0)
        let x = [Double](repeating: 1, count: 2000)
        let y = run(x, line: line, slice: 50, changes: [(100, { $0.setWetDryMix(100) })])[0]
        XCTAssertEqual(y[99], 1)   // dry
        // Wet ramps linearly over 480 frames; with a constant input the output stays 1 (d = x).
        for i in 100..<2000 { XCTAssertEqual(y[i], 1, accuracy: 1e-6) }
        XCTAssertEqual(line.wetGlide.current, 1)
    }
}
