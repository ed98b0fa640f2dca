// Audio into parameters (ParameterConnection): AM, FM and an LFO-driven filter against numpy and the spec's formulas; cycles, rates, changes while running.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class ParameterConnectionTests: XCTestCase {
    let sr = 48000.0

    /// scripts/reference/modulation_reference.py's samples.
    private func numpy(_ arguments: [String]) throws -> [Double] {
        try ReferenceScript.run("modulation_reference.py", arguments: arguments).doubles
    }

    private func oscillator(_ id: String, frequency: Double, amplitude: Double = 1, channels: Int = 1) throws -> OscillatorNode {
        let o = OscillatorNode(id: id, sampleRate: sr, properties: OscillatorProperties(channels: channels))
        try o.setParameter("frequency", frequency)
        try o.setParameter("amplitude", amplitude)
        return o
    }

    /// AM: a 1000 Hz carrier through a gain of 0.5 whose parameter takes a 5 Hz LFO of
    /// amplitude 0.4 (stereo, so the down-mix to mono is exercised): y = carrier · (0.5 + LFO),
    /// within 2e-7 of numpy; the same for any slicing.
    func testAmplitudeModulationMatchesNumpy() throws {
        func render(_ pattern: [Int]) throws -> [Float] {
            let carrier = try oscillator("carrier", frequency: 1000)
            let lfo = try oscillator("lfo", frequency: 5, amplitude: 0.4, channels: 2)
            let amp = GainNode(id: "amp", sampleRate: sr)
            try amp.setParameter("gain", 0.5)
            let g = AudioGraph(sampleRate: sr, maximumFramesPerSlice: 512)
            for n in [carrier, lfo, amp, GenericOutputNode(id: "out")] as [GraphNode] { try g.addNode(n) }
            try g.connect("carrier", to: "amp")
            try g.connect("amp", to: "out")
            try g.connect("lfo", to: "amp", parameter: "gain")
            XCTAssertEqual(g.parameterConnections, [ParameterConnection(source: "lfo", destination: "amp", parameter: "gain")])
            try g.initialize()
            try g.start()
            return renderFrames(g, frames: 24000, channels: 1, slices: pattern)[0]
        }
        let y = try render([512])
        let ref = try numpy(["am", "1000", "0.5", "5", "0.4", "48000", "24000"])
        let e = SignalMeasurement.worstError(y) { ref[$0] }
        XCTAssertLessThan(e.error, 2e-7, "at \(e.at)")
        print("AM: worst error against numpy \(e.error)")
        XCTAssertTrue(y == (try render([100, 512, 3])), "slicing changed the output")
    }

    /// FM: a 440 Hz carrier whose frequency parameter takes a 7 Hz LFO scaled by a gain of 200
    /// (f = 440 + 200 sin(2π·7n/sr), the parameter's intrinsic value plus its input, per sample):
    /// within 1e-4 of numpy's phase accumulation (the frequencies pass through single precision).
    func testFrequencyModulationMatchesNumpy() throws {
        func render(_ pattern: [Int]) throws -> [Float] {
            let carrier = try oscillator("carrier", frequency: 440)
            let lfo = try oscillator("lfo", frequency: 7)
            let depth = GainNode(id: "depth", sampleRate: sr)
            try depth.setParameter("gain", 200)
            let g = try startedGraph([lfo, depth, carrier], "lfo -> depth; carrier -> out", slice: 256) { g in
                try g.connect("depth", to: "carrier", parameter: "frequency")
            }
            return renderFrames(g, frames: 24000, channels: 1, slices: pattern)[0]
        }
        let y = try render([256])
        let ref = try numpy(["fm", "440", "200", "7", "48000", "24000"])
        let e = SignalMeasurement.worstError(y) { ref[$0] }
        XCTAssertLessThan(e.error, 1e-4, "at \(e.at)")
        print("FM: worst error against numpy \(e.error)")
        XCTAssertTrue(y == (try render([1, 256, 77])), "slicing changed the output")
    }

    /// An LFO-driven low-pass: an eq band (smoothing off, Web Audio's) whose frequency is
    /// 2000 Hz plus a 3 Hz LFO times 1500: within 1e-6 of the cookbook low-pass recurrence with
    /// the spec's computed frequency per sample.
    func testLFODrivenFilterFollowsTheComputedFrequency() throws {
        var properties = EQProperties(bands: [EQBand(type: .lowPass, frequency: 2000, q: 0.7)])
        properties.smoothing = false
        let eq = EQNode(id: "eq", sampleRate: sr, properties: properties)
        let lfo = try oscillator("lfo", frequency: 3)
        let depth = GainNode(id: "depth", sampleRate: sr)
        try depth.setParameter("gain", 1500)
        let x = (0..<24000).map { Float(0.3 * sin(Double($0) * 0.37) + 0.3 * sin(Double($0) * 0.05)) }
        let src = formulaSource("src", channels: 1) { _, n in x[Int(n)] }
        let g = try startedGraph([src, eq, lfo, depth], "src -> eq -> out; lfo -> depth", slice: 512) { g in
            try g.connect("depth", to: "eq", parameter: "band.0.frequency")
        }
        let y = renderFrames(g, frames: 24000, channels: 1)[0]
        var z1 = 0.0, z2 = 0.0, worst = 0.0
        for n in 0..<24000 {
            let lfoValue = Float(sin(2 * Double.pi * 3 * Double(n) / sr))   // the oscillator's samples
            let f = Double(Float(2000) + Float(1500) * lfoValue)
            let w = 2 * Double.pi * f / sr, alpha = sin(w) / (2 * 0.7), c = cos(w), a0 = 1 + alpha
            let b0 = (1 - c) / 2 / a0, b1 = (1 - c) / a0, a1 = -2 * c / a0, a2 = (1 - alpha) / a0
            let xn = Double(x[n])
            let out = b0 * xn + z1
            z1 = b1 * xn - a1 * out + z2
            z2 = b0 * xn - a2 * out
            worst = max(worst, abs(Double(y[n]) - out))
        }
        XCTAssertLessThan(worst, 1e-5)
        print("LFO-driven filter: worst error against the recurrence \(worst)")
    }

    /// A parameter connection that closes a loop is a cycle; an unknown parameter, a bus out of
    /// range and a repeated connection are refused; a source at another rate is refused when
    /// the formats are resolved.
    func testCyclesUnknownParametersAndRatesAreRefused() throws {
        let g = AudioGraph(sampleRate: sr, maximumFramesPerSlice: 256)
        for n in [try oscillator("osc", frequency: 440), GainNode(id: "amp", sampleRate: sr), GenericOutputNode(id: "out")] as [GraphNode] {
            try g.addNode(n)
        }
        try g.connect("osc", to: "amp")
        try g.connect("amp", to: "out")
        XCTAssertThrowsError(try g.connect("amp", to: "osc", parameter: "frequency")) { XCTAssertEqual("\($0)", "the connections form a cycle through \"osc\"") }
        XCTAssertThrowsError(try g.connect("osc", to: "amp", parameter: "volume")) { XCTAssertEqual("\($0)", "node \"amp\" has no parameter \"volume\"") }
        XCTAssertThrowsError(try g.connect("osc", outputBus: 1, to: "amp", parameter: "gain"))
        try g.connect("osc", to: "amp", parameter: "gain")
        XCTAssertThrowsError(try g.connect("osc", to: "amp", parameter: "gain"))
        try g.disconnect("osc", from: "amp", parameter: "gain")
        XCTAssertEqual(g.parameterConnections, [])
        let slow = OscillatorNode(id: "slow", sampleRate: 44100)
        slow.declaredFormat.sampleRate = 44100
        try g.addNode(slow)
        try g.connect("slow", to: "amp", parameter: "gain")
        XCTAssertThrowsError(try g.initialize()) { XCTAssertTrue("\($0)".contains("44100"), "\($0)") }
    }

    /// Connected and disconnected by change lists while running: the modulation starts and
    /// stops at the update's slice; without it the output is the unmodulated one bit for bit.
    func testConnectAndDisconnectWhileRunning() throws {
        let carrier = try oscillator("carrier", frequency: 1000)
        let lfo = try oscillator("lfo", frequency: 50, amplitude: 0.5)
        let amp = GainNode(id: "amp", sampleRate: sr)
        try amp.setParameter("gain", 0.25)
        let g = try startedGraph([carrier, lfo, amp], "carrier -> amp -> out", slice: 480)
        var y = renderFrames(g, frames: 960, channels: 1)[0]
        g.enqueue(.connectParameter(source: "lfo", sourceBus: 0, destination: "amp", parameter: "gain"))
        _ = try g.update(waitUntilApplied: false)
        y += renderFrames(g, frames: 960, channels: 1)[0]
        g.enqueue(.disconnectParameter(source: "lfo", sourceBus: 0, destination: "amp", parameter: "gain"))
        _ = try g.update(waitUntilApplied: false)
        y += renderFrames(g, frames: 960, channels: 1)[0]
        for n in 0..<2880 {
            let c = Float(sin(2 * Double.pi * 1000 * Double(n) / sr))
            // The LFO started with the graph (it renders only while connected, on its own timeline).
            let gain: Float = (960..<1920).contains(n) ? Float(0.25) + 0.5 * Float(sin(2 * Double.pi * 50 * Double(n - 960) / sr)) : 0.25
            XCTAssertEqual(Double(y[n]), Double(c * gain), accuracy: 2e-7, "frame \(n)")
            if abs(Double(y[n]) - Double(c * gain)) > 2e-7 { break }
        }
    }
}
