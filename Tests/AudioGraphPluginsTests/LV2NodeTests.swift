// Tests of LV2Node with Debian's swh plugins rendered offline against their documented formulas.
import AudioGraphCore
import AudioGraphNodes
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphPlugins

final class LV2NodeTests: XCTestCase {
    let sr = 48000.0

    /// swh amp: y = x * 10^(gain/20); at -6.0206 dB a sine comes out at half its amplitude.
    func testAmpAtMinusSixDBHalvesASine() throws {
        let amp = try LV2Node(id: "amp", uri: SWH.amp)
        try amp.setParameter("gain", -6.0206)
        let src = formulaSource("tone", channels: 1) { _, n in Float(0.8 * sin(2 * Double.pi * 440 * Double(n) / 48000)) }
        let g = try startedChain([src, amp], ["tone", "amp"])
        let y = renderFrames(g, frames: 4800, channels: 1)[0]
        let coefficient = pow(10, -6.0206 / 20)
        var fromFormula = 0.0, fromHalf = 0.0
        for n in 0..<4800 {
            let x = Double(Float(0.8 * sin(2 * Double.pi * 440 * Double(n) / 48000)))
            fromFormula = max(fromFormula, abs(Double(y[n]) - x * coefficient))
            fromHalf = max(fromHalf, abs(Double(y[n]) - x * 0.5))
        }
        XCTAssertLessThan(fromFormula, 1e-6)
        XCTAssertLessThan(fromHalf, 1e-4)
    }

    /// One mono amp on a stereo bus runs two instances: each channel scaled, independently.
    func testPerChannelInstancesOnAStereoBus() throws {
        let amp = try LV2Node(id: "amp", uri: SWH.amp)
        try amp.setParameter("gain", 20)   // x10
        let src = formulaSource("src", channels: 2) { c, n in c == 0 ? Float(n % 100) / 1000 : -Float(n % 37) / 1000 }
        let g = try startedChain([src, amp], ["src", "amp"])
        XCTAssertEqual(amp.outputFormats[0].channelCount, 2)
        let y = renderFrames(g, frames: 1000, channels: 2)
        for n in 0..<1000 {
            XCTAssertEqual(Double(y[0][n]), Double(Float(n % 100) / 1000) * 10, accuracy: 1e-5)
            XCTAssertEqual(Double(y[1][n]), -Double(Float(n % 37) / 1000) * 10, accuracy: 1e-5)
        }
    }

    /// swh matrixStMS, two audio inputs and two outputs: mid = (L+R)/2, side = (L-R)/2.
    func testStereoToMidSideMatrix() throws {
        let ms = try LV2Node(id: "ms", uri: SWH.stereoToMidSide)
        XCTAssertEqual(ms.inputBusCount, 1)
        let src = formulaSource("src", channels: 2) { c, n in
            Float(c == 0 ? sin(Double(n) * 0.01) : 0.3 * cos(Double(n) * 0.023))
        }
        let g = try startedChain([src, ms], ["src", "ms"])
        let y = renderFrames(g, frames: 2000, channels: 2)
        for n in 0..<2000 {
            let l = Double(Float(sin(Double(n) * 0.01))), r = Double(Float(0.3 * cos(Double(n) * 0.023)))
            XCTAssertEqual(Double(y[0][n]), (l + r) / 2, accuracy: 1e-6)
            XCTAssertEqual(Double(y[1][n]), (l - r) / 2, accuracy: 1e-6)
        }
    }

    /// A two-input plugin on a mono bus is refused with a message naming the plugin and the counts.
    func testMatrixOnAMonoBusIsRefused() throws {
        let ms = try LV2Node(id: "ms", uri: SWH.stereoToMidSide)
        let src = formulaSource("src", channels: 1) { _, _ in 0 }
        XCTAssertThrowsError(try startedChain([src, ms], ["src", "ms"])) { error in
            XCTAssertTrue("\(error)".contains("takes 2 audio inputs; input bus 0 brings 1 channel"), "\(error)")
        }
    }

    /// A change list ramp is followed in sub-blocks of 16 frames (LV2 controls are read once per
    /// run): each sub-block has the gain of its first frame; the ramp's last sub-block runs on up
    /// to the first frame where the value holds still, and from there the plugin runs with -20 dB.
    func testParameterRampIsFollowedInSixteenFrameBlocks() throws {
        XCTAssertEqual(LV2Kernel.rampBlock, 16)
        let amp = try LV2Node(id: "amp", uri: SWH.amp)
        let src = formulaSource("one", channels: 1) { _, _ in 1 }
        let g = try startedChain([src, amp], ["one", "amp"], slice: 64)
        _ = renderFrames(g, frames: 64, channels: 1)
        try amp.setParameter("gain", -20, rampFrames: 100)
        let y = renderFrames(g, frames: 192, channels: 1)[0]
        // Ramp from 0 dB to -20 dB over 100 frames, in dB (the parameter), then the plugin's 10^(dB/20).
        func db(_ m: Int) -> Double { m < 100 ? -20 * Double(m) / 100 : -20 }
        for n in 0..<192 {
            let blockStart = n <= 100 ? n - n % 16 : n
            XCTAssertEqual(Double(y[n]), pow(10, db(blockStart) / 20), accuracy: 1e-5, "frame \(n)")
        }
        XCTAssertEqual(Double(y[150]), 0.1, accuracy: 1e-5)
    }

    /// Throughput of a ramped amp on stereo (two instances), ramps always running: printed, and
    /// checked to be well above real time. Not a benchmark (the machine is shared); see the report.
    func testRampedAmpThroughput() throws {
        let amp = try LV2Node(id: "amp", uri: SWH.amp)
        let src = formulaSource("src", channels: 2) { _, _ in 0.5 }
        let g = try startedChain([src, amp], ["src", "amp"], slice: 256)
        let frames = 48000 * 10
        var done = 0, toggle = false
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            while done < frames {
                if done % 4096 == 0 { toggle.toggle(); try amp.setParameter("gain", toggle ? -12 : 0, rampFrames: 4096) }
                _ = g.render(frameCount: 256)
                done += 256
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let rate = Double(frames * 2) / seconds / 1e6
        print("LV2 ramped amp, stereo: \(String(format: "%.2f", rate)) M samples/s")
        XCTAssertGreaterThan(rate, 0.096, "slower than real time at 48 kHz stereo")
    }

    /// Bypass passes the input unchanged and the plugin's gain no longer applies.
    func testBypassPassesTheInput() throws {
        let amp = try LV2Node(id: "amp", uri: SWH.amp)
        try amp.setParameter("gain", 12)
        try amp.setParameter("bypass", 1)
        let src = formulaSource("src", channels: 1) { _, n in Float(n % 50) / 50 }
        let g = try startedChain([src, amp], ["src", "amp"])
        let y = renderFrames(g, frames: 512, channels: 1)[0]
        for n in 0..<512 { XCTAssertEqual(y[n], Float(n % 50) / 50) }
        try amp.setParameter("bypass", 0)
        let z = renderFrames(g, frames: 256, channels: 1)[0]
        for n in 0..<256 {
            XCTAssertEqual(Double(z[n]), Double(Float((512 + n) % 50) / 50) * pow(10, 12.0 / 20), accuracy: 1e-5)
        }
    }

    /// swh artificialLatency reports delay * rate frames; the node shows it after initialize.
    func testLatencyIsReported() throws {
        let node = try LV2Node(id: "lat", uri: SWH.artificialLatency)
        try node.setParameter("delay", 10)   // ms
        let src = formulaSource("src", channels: 1) { _, _ in 0 }
        let g = try startedChain([src, node], ["src", "lat"])
        XCTAssertEqual(node.latencyFrames, 480)
        try node.setParameter("delay", 20)
        _ = renderFrames(g, frames: 512, channels: 1)
        XCTAssertEqual(node.latencyFrames, 960)
    }

    /// swh sinCos, a generator (no audio input, two outputs): nothing connected to its input, it
    /// writes sin(phi) and cos(phi) of one phase, so sine² + cosine² = 1 on every frame.
    func testGeneratorWithoutAudioInputs() throws {
        let node = try LV2Node(id: "gen", uri: "http://plugin.org.uk/swh-plugins/sinCos")
        try node.setParameter("freq", 0.5)
        try node.setParameter("pitch", 8)   // 0.5 Hz * 2^8 = 128 Hz
        let g = try startedChain([node], ["gen"])
        XCTAssertEqual(node.outputFormats[0].channelCount, 2)
        let y = renderFrames(g, frames: 4800, channels: 2)
        for n in 0..<4800 { XCTAssertEqual(Double(y[0][n] * y[0][n] + y[1][n] * y[1][n]), 1, accuracy: 1e-5) }
        // After the first slice's glide the phase advances 2π·128/48000 per frame.
        let step = 2 * Double.pi * 128 / 48000
        for n in 1000..<4799 {
            let phase = atan2(Double(y[0][n]), Double(y[1][n])), next = atan2(Double(y[0][n + 1]), Double(y[1][n + 1]))
            var d = next - phase
            if d < 0 { d += 2 * Double.pi }
            XCTAssertEqual(d, step, accuracy: 1e-4, "frame \(n)")
        }
    }

    /// Parameters are the control inputs by symbol with the plugin's ranges, plus bypass.
    func testParametersAreTheControlPorts() throws {
        let amp = try LV2Node(id: "amp", uri: SWH.amp)
        let gain = try XCTUnwrap(amp.parameter("gain"))
        XCTAssertEqual(gain.info.minValue, -70)
        XCTAssertEqual(gain.info.maxValue, 70)
        XCTAssertEqual(gain.info.defaultValue, 0)
        XCTAssertEqual(amp.parameters.map(\.info.address.name), ["gain", "bypass"])
        XCTAssertThrowsError(try amp.setParameter("gain", 71))
    }

    // MARK: Non-finite and runaway audio (issue 22)

    /// A tone with 13 NaN and infinite samples, as a source.
    static func poisoned(_ n: Int64) -> Float {
        if (100..<110).contains(n) { return .nan }
        if n == 300 || n == 301 { return .infinity }
        if n == 302 { return -.infinity }
        return Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000))
    }

    /// Plugins never receive NaN or infinity: swh bodeShifterCV crashed the process (SIGSEGV)
    /// on them, amp passed them on. They get silence instead, and the node counts 13 samples per
    /// input channel; everything that leaves the node is finite and within ±1000.
    func testNonFiniteInputNeverReachesThePlugin() throws {
        for uri in [SWH.amp, "http://plugin.org.uk/swh-plugins/bodeShifterCV"] {
            let node = try LV2Node(id: "fx", uri: uri)
            // amp: one input; bodeShifterCV: two (its audio and its shift CV as audio).
            let channels = node.plugin.audioInputs.count
            // The CV channel carries the bad samples around 0 (no shift).
            let src = formulaSource("src", channels: channels) { c, n in c == 0 ? Self.poisoned(n) : Self.poisoned(n) * 0 }
            let g = try startedChain([src, node], ["src", "fx"])
            let y = renderFrames(g, frames: 4800, channels: node.outputFormats[0].channelCount)
            for channel in y { XCTAssertTrue(channel.allSatisfy { abs($0) <= 1000 }, uri) }
            XCTAssertEqual(node.renderFaults.nonFiniteInputSamples, 13 * channels, uri)
            // bodeShifterCV also runs away on its own (2.96e26 from a clean tone at its default
            // controls, measured): muted as well, which the summary says after the input count.
            XCTAssertTrue(node.renderFaultSummary?.hasPrefix("plugin \(uri): \(13 * channels) non-finite input samples replaced by silence") == true,
                          node.renderFaultSummary ?? "nil")
        }
        // amp: the samples around the silenced ones are the plugin's formula (gain 0 dB: the input).
        let amp = try LV2Node(id: "amp", uri: SWH.amp)
        let g = try startedChain([formulaSource("src", channels: 1) { _, n in Self.poisoned(n) }, amp], ["src", "amp"])
        let y = renderFrames(g, frames: 1024, channels: 1)[0]
        for n in 0..<1024 {
            let x = Self.poisoned(Int64(n))
            XCTAssertEqual(y[n], x.isFinite ? x : 0, accuracy: 1e-6, "frame \(n)")
        }
    }

    /// A plugin whose output runs away (amp at +12 dB on a 300-amplitude input: about 1194, past
    /// the ±1000 limit) is silenced block by block, muted after 8 bad blocks in a row, and
    /// reported; nothing beyond the limit leaves the node. Before, the values went through.
    func testRunawayOutputIsSilencedThenMuted() throws {
        let amp = try LV2Node(id: "amp", uri: SWH.amp)
        try amp.setParameter("gain", 12)
        let src = formulaSource("src", channels: 1) { _, n in Float(300 * sin(2 * Double.pi * 440 * Double(n) / 48000)) }
        let g = try startedChain([src, amp], ["src", "amp"], slice: 256)
        let y = renderFrames(g, frames: 4096, channels: 1)[0]
        XCTAssertEqual(y.map { abs($0) }.max(), 0)
        XCTAssertTrue(amp.renderFaults.isMuted)
        XCTAssertEqual(amp.renderFaults.badOutputPieceCount, LV2RenderFaults.muteAfterBadPieces)
        XCTAssertEqual(amp.renderFaultSummary, "plugin \(SWH.amp): 8 blocks of non-finite or out-of-range output (beyond ±1000) silenced; muted after 8 bad blocks in a row")
    }
}
