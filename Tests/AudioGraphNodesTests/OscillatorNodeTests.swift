// Tests of OscillatorNode against the spec's formulas: sine, start/stop, noise, band-limited waves.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class OscillatorNodeTests: XCTestCase {
    let sr = 48000.0

    private func oscillator(_ id: String = "osc", _ waveform: Waveform = .sine, frequency: Double = 440,
                            amplitude: Double = 1, channels: Int = 1, seed: UInt64 = 0,
                            start: Double = 0, stop: Double? = nil) throws -> OscillatorNode {
        let o = OscillatorNode(id: id, sampleRate: sr, properties: OscillatorProperties(
            waveform: waveform, channels: channels, seed: seed, startTime: start, stopTime: stop))
        try o.setParameter("frequency", frequency)
        try o.setParameter("amplitude", amplitude)
        return o
    }

    func testSineMatchesTheFormula() throws {
        let f = 997.3, a = 0.5
        let g = try startedGraph([try oscillator(frequency: f, amplitude: a, channels: 2)], "osc -> out")
        let x = renderFrames(g, frames: 96000, channels: 2)
        let e = SignalMeasurement.worstError(x[0]) { n in a * sin(2 * Double.pi * f * Double(n) / self.sr) }
        XCTAssertLessThan(e.error, 1e-6, "at frame \(e.at)")
        XCTAssertEqual(x[0], x[1], "every channel carries the same value")
    }

    func testSineIsTheSameForAnySliceSize() throws {
        let f = 1234.5
        let a = renderFrames(try startedGraph([try oscillator(frequency: f)], "osc -> out", slice: 512), frames: 5000, channels: 1)
        let b = renderFrames(try startedGraph([try oscillator(frequency: f)], "osc -> out", slice: 64), frames: 5000, channels: 1,
                             slices: [1, 7, 64, 13])
        XCTAssertEqual(a, b)
    }

    func testStartAndStopTimesWithPhaseZeroAtTheStartFrame() throws {
        let f = 1234.5, a = 0.25
        let g = try startedGraph([try oscillator(frequency: f, amplitude: a, channels: 2, start: 0.01, stop: 0.02)],
                                 "osc -> out", slice: 100)
        let x = renderFrames(g, frames: 2000, channels: 2)
        // startTime 0.01 s = frame 480, stopTime 0.02 s = frame 960.
        let e = SignalMeasurement.worstError(x[1]) { n in n < 480 || n >= 960 ? 0 : a * sin(2 * Double.pi * f * Double(n - 480) / self.sr) }
        XCTAssertLessThan(e.error, 1e-6, "at frame \(e.at)")
        XCTAssertEqual(x[0][479], 0)
        XCTAssertNotEqual(x[0][481], 0)
        XCTAssertTrue(x[0][960...].allSatisfy { $0 == 0 })
    }

    func testAnAddedOscillatorCountsStartTimeFromTheFrameItWasAdded() throws {
        let first = try oscillator("first", frequency: 100, amplitude: 0.1)
        let g = try startedGraph([first], "first -> out", slice: 100)
        _ = renderFrames(g, frames: 1000, channels: 1)
        // Added at frame 1000 with startTime 0.01 s (480 frames) and stopTime 0.02 s: sounds from 1480 to 1960.
        let late = try oscillator("late", frequency: 2000, amplitude: 0.5, start: 0.01, stop: 0.02)
        try g.addNode(late)
        try g.disconnect("out")
        try g.connect("late", to: "out")
        try g.update(waitUntilApplied: false)
        let y = renderFrames(g, frames: 1500, channels: 1)[0]
        let e = SignalMeasurement.worstError(y) { i in
            let n = 1000 + i
            return n < 1480 || n >= 1960 ? 0 : 0.5 * sin(2 * Double.pi * 2000 * Double(n - 1480) / self.sr)
        }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
    }

    /// n counts from the node's start frame on the graph timeline, whether or not the node was
    /// pulled in between (here it is disconnected for 1000 frames, then connected again).
    func testSineStaysOnTheTimelineWhileNotPulled() throws {
        let f = 1000.0, a = 0.5
        let osc = try oscillator(frequency: f, amplitude: a)
        let quiet = formulaSource("quiet", channels: 1) { _, _ in 0 }
        let g = try startedGraph([osc, quiet], "osc -> out", slice: 100)
        _ = renderFrames(g, frames: 1000, channels: 1)
        try g.disconnect("out")
        try g.connect("quiet", to: "out")
        try g.update(waitUntilApplied: false)
        _ = renderFrames(g, frames: 1000, channels: 1)
        try g.disconnect("out")
        try g.connect("osc", to: "out")
        try g.update(waitUntilApplied: false)
        let y = renderFrames(g, frames: 1000, channels: 1)[0]
        let e = SignalMeasurement.worstError(y) { i in a * sin(2 * Double.pi * f * Double(2000 + i) / self.sr) }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
    }

    func testWaveformAndStopTimeChangedWhileRunningKeepThePhase() throws {
        let f = 1100.0, a = 0.5
        let osc = try oscillator(frequency: f, amplitude: a)
        let g = try startedGraph([osc], "osc -> out", slice: 128)
        _ = renderFrames(g, frames: 1000, channels: 1, slices: [100])
        // At frame 1000: square from now on, stopping at 0.03 s (frame 1440) of the node's time.
        try osc.setProperty("waveform", "square")
        try osc.setProperty("stopTime", Optional<Double>.some(0.03))
        XCTAssertThrowsError(try osc.setProperty("waveform", "wobble"))
        XCTAssertEqual(g.pendingChanges.count, 2)
        try g.update(waitUntilApplied: false)
        let y = renderFrames(g, frames: 1000, channels: 1)[0]
        let e = SignalMeasurement.worstError(y) { i in
            let n = 1000 + i
            return n >= 1440 ? 0 : a * self.fourier(.square, f: f, n: n)
        }
        XCTAssertLessThan(e.error, 2e-6, "at \(e.at)")
    }

    func testSilenceIsFlaggedBeforeTheStart() throws {
        let g = try startedGraph([try oscillator(start: 0.1)], "osc -> out", slice: 64)
        let r = try XCTUnwrap(g.render(frameCount: 64))
        XCTAssertTrue(r.isSilent)
    }

    func testFrequencyRangeIsZeroToNyquist() throws {
        let o = try oscillator()
        XCTAssertNoThrow(try o.setParameter("frequency", 24000))
        XCTAssertNoThrow(try o.setParameter("frequency", 0))
        XCTAssertThrowsError(try o.setParameter("frequency", 24000.5))
        XCTAssertThrowsError(try o.setParameter("amplitude", 1.01))
    }

    func testNoiseRangeMeanVarianceAndSeed() throws {
        let a = 0.8, frames = 96000
        let x = renderFrames(try startedGraph([try oscillator("osc", .noise, amplitude: a, seed: 7)], "osc -> out"), frames: frames, channels: 1)[0]
        XCTAssertTrue(x.allSatisfy { abs(Double($0)) <= a }, "uniform in [-a, a]")
        let mean = x.reduce(0.0) { $0 + Double($1) } / Double(frames)
        var squares = 0.0
        for v in x { squares += (Double(v) - mean) * (Double(v) - mean) }
        let variance = squares / Double(frames)
        // Uniform on [-a, a]: mean 0 (standard error a/sqrt(3N) = 0.0015), variance a²/3.
        XCTAssertEqual(mean, 0, accuracy: 0.008)
        XCTAssertEqual(variance, a * a / 3, accuracy: 0.02 * a * a / 3)
        XCTAssertGreaterThan(x.max()!, Float(a * 0.99))
        XCTAssertLessThan(x.min()!, Float(-a * 0.99))
        // Adjacent samples are uncorrelated (white).
        var lag1 = 0.0
        for n in 1..<frames { lag1 += Double(x[n]) * Double(x[n - 1]) }
        XCTAssertEqual(lag1 / Double(frames) / variance, 0, accuracy: 0.02)

        let same = renderFrames(try startedGraph([try oscillator("osc", .noise, amplitude: a, seed: 7)], "osc -> out", slice: 64),
                                frames: frames, channels: 1, slices: [3, 64, 50])[0]
        XCTAssertEqual(x, same, "the same seed gives the same samples, whatever the slices")
        let other = renderFrames(try startedGraph([try oscillator("osc", .noise, amplitude: a, seed: 8)], "osc -> out"), frames: 1000, channels: 1)[0]
        XCTAssertNotEqual(Array(x[0..<1000]), other)
    }

    /// The Fourier series of the unit waves (`fourierSeries`, harmonics up to Nyquist) at frame n.
    private func fourier(_ w: Waveform, f: Double, n: Int) -> Double {
        fourierSeries(w, theta: 2 * Double.pi * f * Double(n) / sr, frequency: f, sampleRate: sr)
    }

    func testBandLimitedWavesMatchTheirFourierSeries() throws {
        for w in [Waveform.square, .sawtooth, .triangle] {
            let f = 1100.0, a = 0.6
            let x = renderFrames(try startedGraph([try oscillator(w.rawValue, w, frequency: f, amplitude: a)], "\(w.rawValue) -> out"),
                                 frames: 4800, channels: 1)[0]
            let e = SignalMeasurement.worstError(x) { n in a * self.fourier(w, f: f, n: n) }
            XCTAssertLessThan(e.error, 2e-6, "\(w) at frame \(e.at)")
        }
    }

    func testBandLimitedWavesHaveNoAliasing() throws {
        // 1100 Hz at 48 kHz over 1 s: 1100 whole cycles, so every DFT bin is exact (1 Hz apart).
        // Harmonics 1...21 lie below Nyquist; harmonic k > 21 of a naive wave would fold to
        // |k*1100 - 48000*m|, which is never a multiple of 1100 for k = 22...43.
        let f = 1100.0
        for w in [Waveform.square, .sawtooth, .triangle] {
            let x = renderFrames(try startedGraph([try oscillator(w.rawValue, w, frequency: f)], "\(w.rawValue) -> out"),
                                 frames: 48000, channels: 1)[0]
            // The fundamental has its Fourier amplitude.
            let fundamental: Double = w == .triangle ? 8 / (Double.pi * Double.pi) : w == .square ? 4 / Double.pi : 2 / Double.pi
            XCTAssertEqual(dftMagnitude(x, frequency: f, sampleRate: sr), fundamental, accuracy: 1e-4, "\(w)")
            if w != .triangle {
                // The 3rd harmonic: 1/3 of the fundamental.
                XCTAssertEqual(dftMagnitude(x, frequency: 3 * f, sampleRate: sr), fundamental / 3, accuracy: 1e-4, "\(w)")
            }
            var worstAlias = 0.0
            for k in 22...43 {
                var folded = (Double(k) * f).truncatingRemainder(dividingBy: sr)
                if folded > sr / 2 { folded = sr - folded }
                worstAlias = max(worstAlias, dftMagnitude(x, frequency: folded, sampleRate: sr))
            }
            // A naive (aliasing) sawtooth would put about 2/(pi*k) ≈ 0.015...0.03 there.
            XCTAssertLessThan(worstAlias, 1e-5, "\(w): energy at aliased frequencies")
        }
    }

    /// The kernel's polynomial sine against libm's `sin(2π·p)` on a fine grid of phases: the
    /// results agree within 1e-15, and at amplitudes 1 and 0.5 at most a few samples in 500 000
    /// round to a neighbouring Float. Phases outside [0, 1) agree too (within 1e-9 there: libm's
    /// argument 2π·p itself loses digits).
    func testSineMatchesLibmSine() {
        let n = 500_000
        var worst = 0.0, floatDifferences = 0
        for k in 0..<n {
            let p = Double(k) / Double(n)
            let ours = OscillatorKernel.sine(ofPhase: p), libm = sin(2 * Double.pi * p)
            worst = max(worst, abs(ours - libm))
            if Float(ours) != Float(libm) { floatDifferences += 1 }
            if Float(0.5 * ours) != Float(0.5 * libm) { floatDifferences += 1 }
        }
        XCTAssertLessThan(worst, 1e-15)
        XCTAssertLessThanOrEqual(floatDifferences, 8)
        for p in [-3.25, -0.75, 1.25, 1000.1, 123456.875] {
            XCTAssertEqual(OscillatorKernel.sine(ofPhase: p), sin(2 * Double.pi * p), accuracy: 1e-9, "phase \(p)")
        }
        // The four-lane form gives each lane what the one-phase form gives.
        let lanes = SIMD4<Double>(0.1, 0.3, 0.6, 0.9)
        let four = OscillatorKernel.sine(ofPhases: lanes)
        for i in 0..<4 { XCTAssertEqual(four[i].bitPattern, OscillatorKernel.sine(ofPhase: lanes[i]).bitPattern) }
    }

    // MARK: Web Audio's detune and PeriodicWave

    /// numpy's PeriodicWave oscillator (scripts/reference/periodic_wave_reference.py).
    private func numpyPeriodicWave(real: [Double], imag: [Double], disableNormalization: Bool, frequency: Double, frames: Int) throws -> [Double] {
        func list(_ v: [Double]) -> String { v.map { "\($0)" }.joined(separator: ",") }
        return try ReferenceScript.run("periodic_wave_reference.py", arguments: [
            list(real), list(imag), disableNormalization ? "1" : "0", "\(frequency)", "48000", "\(frames)"]).doubles
    }

    /// Custom waves against numpy: normalized (peak 1 of the whole series) and not, band-limited
    /// at 3000 Hz (harmonics 8 and up are above Nyquist and must not sound), any slicing.
    func testPeriodicWaveMatchesNumpy() throws {
        let cases: [(real: [Double], imag: [Double], disable: Bool, frequency: Double)] = [
            ([0, -1, 1], [0, 0, 0], false, 440),                       // the W3C normalization test's wave
            ([0.3, 0.2, 0, 0.5, 0.1, 0, 0, 0.05, 0.4, 0.3], [0, 1, 0.5, 0, 0.25, 0.1, 0.2, 0, 0.3, 0.3], false, 3000),
            ([0, 0.5, 0.25], [0, 0.5, 0], true, 1000),
        ]
        for c in cases {
            func render(_ pattern: [Int]) throws -> [Float] {
                var props = OscillatorProperties(waveform: .custom)
                props.real = c.real
                props.imag = c.imag
                props.disableNormalization = c.disable
                let osc = OscillatorNode(id: "osc", sampleRate: sr, properties: props)
                try osc.setParameter("frequency", c.frequency)
                let g = try startedGraph([osc], "osc -> out", slice: 512)
                return renderFrames(g, frames: 4800, channels: 1, slices: pattern)[0]
            }
            let y = try render([512])
            let ref = try numpyPeriodicWave(real: c.real, imag: c.imag, disableNormalization: c.disable, frequency: c.frequency, frames: 4800)
            let e = SignalMeasurement.worstError(y) { ref[$0] }
            XCTAssertLessThan(e.error, 2e-6, "\(c) at \(e.at)")
            print("periodicWave \(c.real.count) terms at \(c.frequency) Hz: worst error against numpy \(e.error)")
            XCTAssertTrue(y == (try render([1, 100, 512, 7])), "slicing changed the output")
        }
    }

    /// detune: a constant 1200 cents plays an octave up (computedFrequency = 440·2 = 880 Hz); an
    /// automated detune sweep follows the spec's frequency·2^(detune/1200) per sample, checked
    /// against the phase accumulated here from those frequencies.
    func testDetuneIsTheSpecsComputedFrequency() throws {
        let octave = OscillatorNode(id: "osc", sampleRate: sr)
        try octave.setParameter("frequency", 440)
        try octave.setParameter("detune", 1200)
        var g = try startedGraph([octave], "osc -> out", slice: 512)
        var y = renderFrames(g, frames: 4800, channels: 1)[0]
        XCTAssertLessThan(SignalMeasurement.worstError(y) { sin(2 * Double.pi * 880 * Double($0) / 48000) }.error, 2e-6)

        let events: [AutomationEvent] = [.setValue(value: -700, time: 0), .linearRamp(value: 1900, time: 0.1)]
        let timeline = try AutomationTimeline(events: events, defaultValue: 0)
        let swept = OscillatorNode(id: "osc", sampleRate: sr)
        try swept.setParameter("frequency", 440)
        try swept.setAutomation(try AutomationTimeline(events: events, defaultValue: 0), for: "detune")
        g = try startedGraph([swept], "osc -> out", slice: 256)
        y = renderFrames(g, frames: 4800, channels: 1, slices: [256, 3, 100])[0]
        var phase = 0.0, worst = 0.0
        for n in 0..<4800 {
            worst = max(worst, abs(Double(y[n]) - sin(2 * Double.pi * phase)))
            let d = Double(Float(timeline.value(atTime: Double(n) / sr)))
            phase += Double(Float(440 * pow(2, d / 1200))) / sr
            phase -= phase.rounded(.down)
        }
        XCTAssertLessThan(worst, 1e-5)
        print("oscillator detune sweep: worst error against the spec's formula \(worst)")
    }
}
