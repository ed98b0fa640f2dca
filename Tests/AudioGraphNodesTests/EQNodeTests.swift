// Tests of EQNode rendered offline against a Double cascade of cookbook biquads written here.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class EQNodeTests: XCTestCase {
    let sr = 48000.0

    /// Cookbook coefficients, normalised (b0, b1, b2, a1, a2), written out for the test.
    func coefficients(_ type: EQFilterType, _ f0: Double, _ gainDB: Double, _ q: Double) -> [Double] {
        let w0 = 2 * Double.pi * f0 / sr, c = cos(w0), alpha = sin(w0) / (2 * q), A = pow(10, gainDB / 40)
        var k: [Double]
        switch type {
        case .peak: k = [1 + alpha * A, -2 * c, 1 - alpha * A, 1 + alpha / A, -2 * c, 1 - alpha / A]
        case .lowPass: k = [(1 - c) / 2, 1 - c, (1 - c) / 2, 1 + alpha, -2 * c, 1 - alpha]
        case .highShelf:
            let s = 2 * sqrt(A) * alpha
            k = [A * ((A + 1) + (A - 1) * c + s), -2 * A * ((A - 1) + (A + 1) * c), A * ((A + 1) + (A - 1) * c - s),
                 (A + 1) - (A - 1) * c + s, 2 * ((A - 1) - (A + 1) * c), (A + 1) - (A - 1) * c - s]
        default: fatalError("not used here")
        }
        return [k[0] / k[3], k[1] / k[3], k[2] / k[3], k[4] / k[3], k[5] / k[3]]
    }

    /// lfilter in Double (direct form I).
    func filter(_ x: [Double], _ k: [Double]) -> [Double] {
        var y = [Double](repeating: 0, count: x.count)
        for n in x.indices {
            var v = k[0] * x[n]
            if n >= 1 { v += k[1] * x[n - 1] - k[3] * y[n - 1] }
            if n >= 2 { v += k[2] * x[n - 2] - k[4] * y[n - 2] }
            y[n] = v
        }
        return y
    }

    /// Two tones per channel (channel 1 different), as a source.
    static func input(_ c: Int, _ n: Int64) -> Double {
        let t = Double(n) / 48000
        return c == 0 ? 0.3 * sin(2 * Double.pi * 440 * t) + 0.2 * sin(2 * Double.pi * 3000 * t)
                      : 0.25 * sin(2 * Double.pi * 1000 * t + 0.3) + 0.1 * sin(2 * Double.pi * 9000 * t)
    }

    let bands = [EQBand(type: .peak, frequency: 1000, gain: 6, q: 1.5),
                 EQBand(type: .lowPass, frequency: 6000),
                 EQBand(type: .highShelf, frequency: 2500, gain: -4, q: 0.8)]

    func makeGraph(slice: Int = 512, globalGain: Double = -3) throws -> (AudioGraph, EQNode) {
        let eq = EQNode(id: "eq", sampleRate: sr, properties: EQProperties(bands: bands))
        try eq.setParameter("globalGain", globalGain)
        let src = formulaSource("src", channels: 2) { c, n in Float(EQNodeTests.input(c, n)) }
        return (try startedGraph([src, eq], "src -> eq -> out", slice: slice), eq)
    }

    func testCascadeThenGlobalGainMatchesReference() throws {
        let (g, _) = try makeGraph()
        let n = 9600
        let y = renderFrames(g, frames: n, channels: 2)
        for c in 0..<2 {
            var ref = (0..<n).map { Double(Float(EQNodeTests.input(c, Int64($0)))) }
            for b in bands { ref = filter(ref, coefficients(b.type, b.frequency, b.gain, b.q)) }
            let gain = pow(10, -3.0 / 20)
            let e = SignalMeasurement.worstError(y[c]) { ref[$0] * gain }
            XCTAssertLessThan(e.error, 2e-6, "channel \(c) at frame \(e.at)")
        }
    }

    func testPresetBandsAreTheInitialParameters() throws {
        let eq = EQNode(id: "eq", sampleRate: sr, properties: EQProperties(preset: .bassBooster))
        let band = try XCTUnwrap(EQPreset.bassBooster.bands.first)
        XCTAssertEqual(eq.parameter("band.0.frequency")?.value, band.frequency)
        XCTAssertEqual(eq.parameter("band.0.gain")?.value, band.gain)
        XCTAssertEqual(eq.parameter("globalGain")?.value, 0)
    }

    func testBandGainChangeGlidesWithoutStepAndSameForAnySlicing() throws {
        func render(slice: Int, pattern: [Int]) throws -> [[Float]] {
            let (g, eq) = try makeGraph(slice: slice, globalGain: 0)
            var y = renderFrames(g, frames: 4800, channels: 2, slices: pattern)
            try eq.setParameter("band.0.gain", -12)
            try eq.setParameter("band.1.frequency", 2000)
            let rest = renderFrames(g, frames: 4800, channels: 2, slices: pattern)
            for c in 0..<2 { y[c] += rest[c] }
            return y
        }
        let a = try render(slice: 512, pattern: [512])
        let b = try render(slice: 64, pattern: [1, 7, 64, 13, 33])
        XCTAssertEqual(a, b)
        // After 10 ms the output is the new settings' (the glide landed): compare the last part
        // with a filter set to the new values from the start (after its own transient has gone).
        let k = [coefficients(.peak, 1000, -12, 1.5), coefficients(.lowPass, 2000, 0, 0.70710678),
                 coefficients(.highShelf, 2500, -4, 0.8)]
        var ref = (0..<9600).map { Double(Float(EQNodeTests.input(0, Int64($0)))) }
        for kk in k { ref = filter(ref, kk) }
        let e = SignalMeasurement.worstError(a[0], 8000..<9600) { ref[$0] }
        XCTAssertLessThan(e.error, 1e-4, "at \(e.at)")
        // No sample-to-sample jump around the change larger than the signal's own.
        let steps = (4801..<5400).map { abs(a[0][$0] - a[0][$0 - 1]) }.max()!
        let own = (1000..<4800).map { abs(a[0][$0] - a[0][$0 - 1]) }.max()!
        XCTAssertLessThanOrEqual(steps, own * 1.05)
    }

    func testAutomatedFrequencyIsSliceIndependent() throws {
        func render(slice: Int, pattern: [Int]) throws -> [Float] {
            let eq = EQNode(id: "eq", sampleRate: sr, properties: EQProperties(bands: [EQBand(type: .lowPass, frequency: 500)]))
            try eq.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 500, time: 0.01), .exponentialRamp(value: 8000, time: 0.08)], defaultValue: 500),
                for: "band.0.frequency")
            let src = formulaSource("src", channels: 1) { _, n in Float(EQNodeTests.input(0, n)) }
            return renderFrames(try startedGraph([src, eq], "src -> eq -> out", slice: slice), frames: 6000, channels: 1,
                                slices: pattern)[0]
        }
        let a = try render(slice: 512, pattern: [512])
        XCTAssertEqual(a, try render(slice: 4096, pattern: [4096]))
        XCTAssertEqual(a, try render(slice: 64, pattern: [3, 64, 17]))
        // The sweep opens the filter: the 3 kHz tone is much louder at the end than at the start.
        let early = toneFit(Array(a[200..<480]), frequency: 3000, sampleRate: sr).amplitude
        let late = toneFit(Array(a[4800..<6000]), frequency: 3000, sampleRate: sr).amplitude
        XCTAssertGreaterThan(late, 10 * early)
    }

    func testSilentInputGivesSilentOutputOnceRungOut() throws {
        let eq = EQNode(id: "eq", sampleRate: sr, properties: EQProperties(bands: bands))
        let src = RenderCallbackNode(id: "src", channels: 2) { context, buffer in
            buffer.clear(frameCount: context.frameCount); return true
        }
        let g = try startedGraph([src, eq], "src -> eq -> out", slice: 128)
        let r = try XCTUnwrap(g.render(frameCount: 128))
        XCTAssertTrue(r.isSilent)
    }

    /// Bands at exactly sampleRate/2 (the top of `band.N.frequency`): the Web Audio limit filters,
    /// a constant gain, so the output is the input times lowShelf A² = 10^(gain/20) times
    /// highShelf 1 times lowPass 1 — no clamped near-Nyquist filter ringing.
    func testBandsAtNyquistAreTheExactLimitFilters() throws {
        let eq = EQNode(id: "eq", sampleRate: sr, properties: EQProperties(bands: [
            EQBand(type: .lowShelf, frequency: sr / 2, gain: 7, q: 0.7),
            EQBand(type: .highShelf, frequency: sr / 2, gain: -9, q: 0.7),
            EQBand(type: .lowPass, frequency: sr / 2, q: 5),
        ]))
        let src = formulaSource("src", channels: 2) { c, n in Float(EQNodeTests.input(c, n)) }
        let y = renderFrames(try startedGraph([src, eq], "src -> eq -> out", slice: 300), frames: 4800, channels: 2)
        for c in 0..<2 {
            let e = SignalMeasurement.worstError(y[c]) { Double(Float(EQNodeTests.input(c, Int64($0)))) * pow(10, 7.0 / 20) }
            XCTAssertLessThan(e.error, 1e-6, "channel \(c) at frame \(e.at)")
        }
        // A highpass there is silence.
        let hp = EQNode(id: "eq", sampleRate: sr, properties: EQProperties(bands: [EQBand(type: .highPass, frequency: sr / 2)]))
        let src2 = formulaSource("src", channels: 2) { c, n in Float(EQNodeTests.input(c, n)) }
        let z = renderFrames(try startedGraph([src2, hp], "src -> eq -> out", slice: 300), frames: 4800, channels: 2)
        XCTAssertEqual(z.flatMap { $0 }.map { abs($0) }.max(), 0)
    }

    // MARK: Non-finite input (issue 22)

    /// NaN at frames 100...112 and infinity at 200 used to fill every band's memory for good (the
    /// rest of the file NaN). Now the memory is cleared after the slice that carried them: from
    /// the next slice on the output is finite, and once the filters ring out it is the clean
    /// render again (the same input with the bad samples silenced and then the state reset).
    func testNonFiniteInputIsContainedToItsSlice() throws {
        let eq = EQNode(id: "eq", sampleRate: sr, properties: EQProperties(bands: bands))
        let src = formulaSource("src", channels: 2) { c, n in
            if (100...112).contains(n) { return .nan }
            if n == 200 { return .infinity }
            return Float(EQNodeTests.input(c, n))
        }
        let y = renderFrames(try startedGraph([src, eq], "src -> eq -> out", slice: 256), frames: 24000, channels: 2)
        let (clean, _) = try makeGraph(slice: 256, globalGain: 0)
        let z = renderFrames(clean, frames: 24000, channels: 2)
        for c in 0..<2 {
            XCTAssertTrue(y[c][256...].allSatisfy(\.isFinite), "channel \(c)")
            // The filters' memory is short (poles well inside the unit circle): after 0.25 s the
            // reset's transient is gone.
            let e = SignalMeasurement.worstError(y[c], 12000..<24000) { Double(z[c][$0]) }
            XCTAssertLessThan(e.error, 1e-5, "channel \(c) at frame \(e.at)")
        }
    }

    /// `smoothing: false` (Web Audio's BiquadFilterNode): a low-pass band's frequency stepped by
    /// automation takes the cookbook coefficients of the new frequency from the step's frame on,
    /// within 1e-6 of the transposed-direct-form-II recurrence run here with coefficients
    /// switched at that frame; the default glides there for 10 ms.
    func testWithoutSmoothingAFrequencyStepIsExact() throws {
        let x = (0..<4800).map { Float(0.4 * sin(Double($0) * 0.3) + 0.3 * sin(Double($0) * 0.021)) }
        func render(smoothing: Bool) throws -> [Float] {
            var properties = EQProperties(bands: [EQBand(type: .lowPass, frequency: 500, q: 0.7)])
            properties.smoothing = smoothing
            let eq = EQNode(id: "eq", sampleRate: sr, properties: properties)
            try eq.setAutomation(try AutomationTimeline(events: [.setValue(value: 500, time: 0), .setValue(value: 4000, time: 0.05)],
                                                        defaultValue: 500), for: "band.0.frequency")
            let g = try startedGraph([formulaSource("src", channels: 1) { _, n in x[Int(n)] }, eq], "src -> eq -> out", slice: 256)
            return renderFrames(g, frames: 4800, channels: 1)[0]
        }
        /// The cookbook low-pass (R. Bristow-Johnson), normalized by a0.
        func lowPass(_ f0: Double, _ q: Double) -> [Double] {
            let w = 2 * Double.pi * f0 / sr, alpha = sin(w) / (2 * q), c = cos(w), a0 = 1 + alpha
            return [(1 - c) / 2 / a0, (1 - c) / a0, (1 - c) / 2 / a0, -2 * c / a0, (1 - alpha) / a0]
        }
        var z1 = 0.0, z2 = 0.0
        var reference = [Double]()
        for n in 0..<4800 {
            let k = lowPass(n < 2400 ? 500 : 4000, 0.7)
            let xn = Double(x[n])
            let y = k[0] * xn + z1
            z1 = k[1] * xn - k[3] * y + z2
            z2 = k[2] * xn - k[4] * y
            reference.append(y)
        }
        let exact = try render(smoothing: false)
        let e = SignalMeasurement.worstError(exact) { reference[$0] }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
        print("eq smoothing false: worst error against the recurrence \(e.error)")
        let smooth = try render(smoothing: true)
        XCTAssertGreaterThan(abs(Double(smooth[2420]) - reference[2420]), 1e-3, "the default glides over 10 ms")
    }
}
