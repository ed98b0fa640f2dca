// Tests of ReverbNode rendered offline: RT60 per preset (Schroeder backward integration), wet/dry, bypass, automation.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class ReverbNodeTests: XCTestCase {
    let sr = 48000.0

    /// The documented RT60 range of each preset (broadband T30, Docs/Nodes.md).
    static let rt60Ranges: [ReverbPreset: ClosedRange<Double>] = [
        .smallRoom: 0.3...0.45, .mediumRoom: 0.6...0.85, .largeRoom: 0.9...1.3, .largeRoom2: 1.15...1.6,
        .mediumChamber: 0.8...1.1, .largeChamber: 1.15...1.6, .mediumHall: 1.1...1.6, .mediumHall2: 1.3...1.8,
        .mediumHall3: 1.5...2.15, .largeHall: 1.8...2.6, .largeHall2: 2.3...3.2, .cathedral: 3.3...4.8, .plate: 1.05...1.4,
    ]

    func reverb(_ preset: ReverbPreset, wet: Double) throws -> ReverbNode {
        let r = ReverbNode(id: "rv", sampleRate: sr, preset: preset)
        try r.setParameter("wetDryMix", wet)
        return r
    }

    /// The impulse response (mono, fully wet) of `preset`, `seconds` long.
    func impulseResponse(_ preset: ReverbPreset, seconds: Double) throws -> [Float] {
        let src = formulaSource("imp", channels: 1) { _, n in n == 0 ? 1 : 0 }
        let g = try startedGraph([src, try reverb(preset, wet: 100)], "imp -> rv -> out")
        return renderFrames(g, frames: Int(seconds * sr), channels: 1)[0]
    }

    /// RT60 by the textbook method (ISO 3382): Schroeder's backward integration of the squared
    /// impulse response, a least-squares line through the decay curve from -5 to -35 dB (T30),
    /// extrapolated to 60 dB.
    static func rt60(_ h: [Float], sampleRate: Double) -> Double {
        var energy = [Double](repeating: 0, count: h.count)
        var sum = 0.0
        for n in stride(from: h.count - 1, through: 0, by: -1) {
            sum += Double(h[n]) * Double(h[n])
            energy[n] = sum
        }
        let total = energy[0]
        var xs: [Double] = [], ys: [Double] = []
        for n in 0..<h.count {
            let db = 10 * log10(energy[n] / total)
            if db <= -5 && db >= -35 { xs.append(Double(n) / sampleRate); ys.append(db) }
            if db < -35 { break }
        }
        let mx = xs.reduce(0, +) / Double(xs.count), my = ys.reduce(0, +) / Double(ys.count)
        var sxy = 0.0, sxx = 0.0
        for i in xs.indices { sxy += (xs[i] - mx) * (ys[i] - my); sxx += (xs[i] - mx) * (xs[i] - mx) }
        return -60 / (sxy / sxx)
    }

    func testRT60OfTheTextbookMethodOnAnExactExponential() {
        // A decaying noise-free envelope with a known RT60 of 1.7 s: h[n] = 10^(-3 n / (fs·1.7)).
        let h: [Float] = (0..<96000).map { n in
            let envelope: Double = pow(10, -3 * Double(n) / (48000 * 1.7))
            return Float(n % 2 == 0 ? envelope : -envelope)
        }
        XCTAssertEqual(Self.rt60(h, sampleRate: sr), 1.7, accuracy: 0.02)
    }

    func testEachPresetsRT60IsInItsDocumentedRangeAndGrowsToTheCathedral() throws {
        var measured: [ReverbPreset: Double] = [:]
        for preset in ReverbPreset.allCases {
            let seconds = Reverb.Preset(rawValue: preset.rawValue)!.decayTime * 1.2 + 0.3
            let t = Self.rt60(try impulseResponse(preset, seconds: seconds), sampleRate: sr)
            measured[preset] = t
            print("RT60 \(preset.rawValue): \(String(format: "%.3f", t)) s")
            let range = Self.rt60Ranges[preset]!
            XCTAssertTrue(range.contains(t), "\(preset): \(t) s outside \(range)")
        }
        let rooms: [ReverbPreset] = [.smallRoom, .mediumRoom, .largeRoom, .largeHall, .largeHall2, .cathedral]
        for (a, b) in zip(rooms, rooms.dropFirst()) {
            XCTAssertLessThan(measured[a]!, measured[b]!, "\(a) should decay faster than \(b)")
        }
        XCTAssertEqual(measured.max { $0.value < $1.value }?.key, .cathedral)
    }

    func testWetDryMixZeroPassesTheInputBitForBit() throws {
        let src = formulaSource("tone", channels: 2) { c, n in Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000 + Double(c))) }
        let g = try startedGraph([src, try reverb(.cathedral, wet: 0)], "tone -> rv -> out", slice: 100)
        let y = renderFrames(g, frames: 9600, channels: 2)
        for c in 0..<2 {
            XCTAssertEqual(y[c], (0..<9600).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 48000 + Double(c))) })
        }
    }

    func testWetDryMixHundredHasNoDrySignal() throws {
        // An impulse at frame 0: the wet path needs a whole trip around the shortest line
        // (1031 · 0.5 frames for the small room) before anything comes out.
        let h = try impulseResponse(.smallRoom, seconds: 0.1)
        XCTAssertTrue(h[0..<515].allSatisfy { $0 == 0 })
        XCTAssertGreaterThan(h[515..<1000].map { abs($0) }.max()!, 0.01)
    }

    func testBypassPassesTheInputAndAutomatedMixIsSampleExact() throws {
        let value: @Sendable (Int, Int64) -> Float = { c, n in Float(0.3 * sin(Double(n) * 0.05 + Double(c))) }
        // Fully wet, for reference (the network runs whatever the mix).
        let wetGraph = try startedGraph([formulaSource("x", channels: 2, value), try reverb(.mediumRoom, wet: 100)], "x -> rv -> out")
        let wet = renderFrames(wetGraph, frames: 20000, channels: 2)
        // Mix automated: 0 until frame 7001, then 100; then bypass from frame 15000 (set as a step in the same timeline).
        let r = try reverb(.mediumRoom, wet: 0)
        try r.setAutomation(try AutomationTimeline(events: [.setValue(value: 100, time: 7001 / sr)], defaultValue: 0), for: "wetDryMix")
        try r.setAutomation(try AutomationTimeline(events: [.setValue(value: 1, time: 15000 / sr)], defaultValue: 0), for: "bypass")
        let g = try startedGraph([formulaSource("x", channels: 2, value), r], "x -> rv -> out", slice: 64)
        let y = renderFrames(g, frames: 20000, channels: 2)
        for c in 0..<2 {
            for n in 0..<20000 {
                let expected = n < 7001 || n >= 15000 ? value(c, Int64(n)) : wet[c][n]
                if y[c][n] != expected { XCTFail("channel \(c) frame \(n): \(y[c][n]) != \(expected)"); return }
            }
        }
    }

    func testStereoInputGivesTwoDecorrelatedTails() throws {
        let src = formulaSource("imp", channels: 2) { c, n in n == 0 && c == 0 ? 1 : 0 }
        let g = try startedGraph([src, try reverb(.largeHall, wet: 100)], "imp -> rv -> out")
        let y = renderFrames(g, frames: 48000, channels: 2)
        var lr = 0.0, ll = 0.0, rr = 0.0
        for n in 0..<48000 { lr += Double(y[0][n] * y[1][n]); ll += Double(y[0][n] * y[0][n]); rr += Double(y[1][n] * y[1][n]) }
        XCTAssertGreaterThan(ll, 0.1)
        XCTAssertGreaterThan(rr, 0.1)
        XCTAssertLessThan(abs(lr) / (ll * rr).squareRoot(), 0.2, "left and right tails should be decorrelated")
    }

    /// Four channels: channel 2 feeds the network like channel 0 (the left pattern), so an
    /// impulse there gives exactly the tails of an impulse in channel 0; even channels receive
    /// the left output, odd ones the right.
    func testWiderInputsPairUpEvenAndOddChannels() throws {
        func tails(impulseIn channel: Int) throws -> [[Float]] {
            let src = formulaSource("imp", channels: 4) { c, n in n == 0 && c == channel ? 1 : 0 }
            let g = try startedGraph([src, try reverb(.plate, wet: 100)], "imp -> rv -> out")
            return renderFrames(g, frames: 9600, channels: 4)
        }
        let a = try tails(impulseIn: 0), b = try tails(impulseIn: 2)
        XCTAssertEqual(a, b)
        XCTAssertEqual(a[0], a[2])
        XCTAssertEqual(a[1], a[3])
        XCTAssertNotEqual(a[0], a[1])
        XCTAssertGreaterThan(a[1].map { abs($0) }.max()!, 0.01)
    }

    func testPresetPropertyChangesTheRoom() throws {
        let r = ReverbNode(id: "rv", sampleRate: sr)
        XCTAssertEqual(r.preset, .mediumHall)
        try r.setProperty("preset", "cathedral")
        XCTAssertEqual(r.preset, .cathedral)
        XCTAssertThrowsError(try r.setProperty("preset", "bathroom"))
    }
}
