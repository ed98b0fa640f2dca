// Tests of MixerNode against the Web Audio StereoPanner and up/down-mix formulas written here.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class MixerNodeTests: XCTestCase {
    let sr = 48000.0

    // MARK: References (Web Audio API)

    /// StereoPannerNode, mono input: equal-power gains at x = (pan + 1) / 2.
    func panMono(_ s: Double, pan: Double) -> (Double, Double) {
        let x = (pan + 1) / 2
        return (s * cos(x * Double.pi / 2), s * sin(x * Double.pi / 2))
    }

    /// StereoPannerNode, stereo input.
    func panStereo(_ l: Double, _ r: Double, pan: Double) -> (Double, Double) {
        if pan <= 0 {
            let x = pan + 1
            return (l + r * cos(x * Double.pi / 2), r * sin(x * Double.pi / 2))
        }
        let x = pan
        return (l * cos(x * Double.pi / 2), r + l * sin(x * Double.pi / 2))
    }

    /// A distinct signal per input and channel: a slow sine (values stay well inside ±1).
    func signal(_ input: Int, _ channel: Int, _ t: Int64) -> Double { mixerTestSignal(input, channel, t) }

    private func source(_ index: Int, channels: Int, rate: Double? = nil) -> RenderCallbackNode {
        formulaSource("s\(index)", channels: channels, sampleRate: rate) { c, t in Float(mixerTestSignal(index, c, t)) }
    }

    func testMonoInputsPannedAndScaled() throws {
        let mix = MixerNode(id: "mix", sampleRate: sr, inputBusCount: 4)
        let pans = [-1.0, -0.3, 0, 0.8], volumes = [1.0, 0.5, 2, 1.5]
        for i in 0..<4 {
            try mix.setParameter("input.\(i).pan", pans[i])
            try mix.setParameter("input.\(i).volume", volumes[i])
        }
        try mix.setParameter("volume", 0.75)
        let g = try startedGraph((0..<4).map { source($0, channels: 1) } + [mix],
                                 "s0 -> mix:0; s1 -> mix:1; s2 -> mix:2; s3 -> mix:3; mix -> out", slice: 128)
        XCTAssertEqual(mix.outputFormats, [.canonical(sampleRate: sr, channelCount: 2)])
        let y = renderFrames(g, frames: 1000, channels: 2)
        for side in 0..<2 {
            let e = SignalMeasurement.worstError(y[side]) { n in
                var sum = 0.0
                for i in 0..<4 {
                    let p = self.panMono(self.signal(i, 0, Int64(n)), pan: pans[i])
                    sum += volumes[i] * (side == 0 ? p.0 : p.1)
                }
                return 0.75 * sum
            }
            XCTAssertLessThan(e.error, 2e-6, "side \(side) at \(e.at)")
        }
        // A mono input at pan 0 gives 0.70710678 on each side.
        let one = MixerNode(id: "m", sampleRate: sr)
        let h = try startedGraph([formulaSource("c", channels: 1) { _, _ in 1 }, one], "c -> m -> out")
        let z = renderFrames(h, frames: 4, channels: 2)
        XCTAssertEqual(z[0][3], 0.70710678, accuracy: 1e-7)
        XCTAssertEqual(z[1][3], 0.70710678, accuracy: 1e-7)
    }

    /// Mono inputs with constant values are summed two at a time in one pass; the sums must stay
    /// exactly the input-by-input Float sums in input order, whatever sits between them (a stereo
    /// input, a disabled one) and with an odd one left over.
    func testMonoInputsSummedInPairsGiveTheInputByInputSumsBitForBit() throws {
        // Inputs: mono, mono, stereo (pan -1), mono, disabled mono, mono, mono (an odd count of monos
        // before and after the stereo one).
        let stereoInput = 2, disabled = 4, count = 7
        let mix = MixerNode(id: "mix", sampleRate: sr, inputBusCount: count)
        let pans: [Float] = [-1, -0.3, -1, 0.25, 0.5, 0.8, 1], volumes: [Float] = [1, 0.5, 1.25, 2, 1, 1.5, 0.7]
        for i in 0..<count {
            try mix.setParameter("input.\(i).pan", Double(pans[i]))
            try mix.setParameter("input.\(i).volume", Double(volumes[i]))
        }
        try mix.setParameter("input.\(disabled).enable", 0)
        let sources = (0..<count).map { i in source(i, channels: i == stereoInput ? 2 : 1) }
        let g = try startedGraph(sources + [mix], (0..<count).map { "s\($0) -> mix:\($0)" }.joined(separator: "; ") + "; mix -> out",
                                 slice: 256)
        let frames = 1000
        let y = renderFrames(g, frames: frames, channels: 2, slices: [256, 100, 1, 37])
        for n in 0..<frames {
            var left: Float = 0, right: Float = 0
            for i in 0..<count where i != disabled {
                let x = Float(mixerTestSignal(i, 0, Int64(n))), g = volumes[i]
                if i == stereoInput {
                    // StereoPannerNode at pan -1: left = l + r * cos(0), right = r * sin(0); then the volume.
                    let r = Float(mixerTestSignal(i, 1, Int64(n)))
                    left += g * (x + r * 1)
                    right += g * (r * 0)
                } else {
                    let a = (Double(pans[i]) + 1) / 2 * Double.pi / 2
                    let v = g * x
                    left += v * Float(cos(a))
                    right += v * Float(sin(a))
                }
            }
            if y[0][n].bitPattern != left.bitPattern || y[1][n].bitPattern != right.bitPattern {
                XCTFail("frame \(n): \(y[0][n]), \(y[1][n]) against \(left), \(right)")
                return
            }
        }
    }

    func testStereoInputsPanned() throws {
        let mix = MixerNode(id: "mix", sampleRate: sr, inputBusCount: 3)
        let pans = [-0.6, 0, 0.4]
        for i in 0..<3 { try mix.setParameter("input.\(i).pan", pans[i]) }
        let g = try startedGraph((0..<3).map { source($0, channels: 2) } + [mix],
                                 "s0 -> mix:0; s1 -> mix:1; s2 -> mix:2; mix -> out", slice: 100)
        let y = renderFrames(g, frames: 700, channels: 2)
        for side in 0..<2 {
            let e = SignalMeasurement.worstError(y[side]) { n in
                (0..<3).reduce(0.0) { sum, i in
                    let p = self.panStereo(self.signal(i, 0, Int64(n)), self.signal(i, 1, Int64(n)), pan: pans[i])
                    return sum + (side == 0 ? p.0 : p.1)
                }
            }
            XCTAssertLessThan(e.error, 2e-6, "side \(side) at \(e.at)")
        }
        // Stereo at pan 0 passes unchanged.
        let e = SignalMeasurement.worstError(renderFrames(try startedGraph([source(0, channels: 2), MixerNode(id: "m", sampleRate: sr)], "s0 -> m -> out"),
                                      frames: 200, channels: 2)[1]) { n in self.signal(0, 1, Int64(n)) }
        XCTAssertLessThan(e.error, 1e-7)
    }

    func testSixChannelInputIsDownMixedBySpeakersRules() throws {
        // 5.1 (L R C LFE SL SR) to stereo: L + sqrt(1/2)(C + SL), R + sqrt(1/2)(C + SR), LFE dropped; then pan 0 (unchanged).
        let g = try startedGraph([source(0, channels: 6), MixerNode(id: "mix", sampleRate: sr)], "s0 -> mix -> out", slice: 64)
        let y = renderFrames(g, frames: 300, channels: 2)
        let h = 0.5.squareRoot()
        let eL = SignalMeasurement.worstError(y[0]) { n in let s = { self.signal(0, $0, Int64(n)) }; return s(0) + h * (s(2) + s(4)) }
        let eR = SignalMeasurement.worstError(y[1]) { n in let s = { self.signal(0, $0, Int64(n)) }; return s(1) + h * (s(2) + s(5)) }
        XCTAssertLessThan(eL.error, 1e-6)
        XCTAssertLessThan(eR.error, 1e-6)
    }

    func testSixChannelOutputUpMixesAndIgnoresPan() throws {
        let mix = MixerNode(id: "mix", sampleRate: sr, inputBusCount: 2, properties: MixerProperties(channels: 6))
        try mix.setParameter("input.0.pan", -1)
        try mix.setParameter("input.1.volume", 0.5)
        let g = try startedGraph([source(0, channels: 1), source(1, channels: 2), mix], "s0 -> mix:0; s1 -> mix:1; mix -> out", slice: 64)
        XCTAssertEqual(mix.outputFormats, [.canonical(sampleRate: sr, channelCount: 6)])
        let y = renderFrames(g, frames: 200, channels: 6)
        // Mono -> 5.1: centre only. Stereo -> 5.1: L and R, the rest silent.
        let expected: [(Int) -> Double] = [
            { self.signal(1, 0, Int64($0)) * 0.5 }, { self.signal(1, 1, Int64($0)) * 0.5 }, { self.signal(0, 0, Int64($0)) },
            { _ in 0 }, { _ in 0 }, { _ in 0 },
        ]
        for c in 0..<6 {
            let e = SignalMeasurement.worstError(y[c], nil, expected[c])
            XCTAssertLessThan(e.error, 1e-6, "channel \(c) at \(e.at)")
        }
    }

    func testEnableExcludesAnInputAndRampsPerSample() throws {
        let mix = MixerNode(id: "mix", sampleRate: sr, inputBusCount: 2)
        try mix.setParameter("input.1.enable", 0)
        XCTAssertThrowsError(try mix.setParameter("input.1.enable", 2))
        XCTAssertThrowsError(try mix.setParameter("input.0.volume", 4.5))
        XCTAssertThrowsError(try mix.setParameter("input.2.volume", 1), "only two inputs")
        let g = try startedGraph([formulaSource("a", channels: 1) { _, _ in 0.5 }, formulaSource("b", channels: 1) { _, _ in 0.25 }, mix],
                                 "a -> mix:0; b -> mix:1; mix -> out", slice: 64)
        let h = 0.5.squareRoot()
        XCTAssertEqual(Double(renderFrames(g, frames: 64, channels: 2)[0][10]), 0.5 * h, accuracy: 1e-7)
        // Enable input 1 again and ramp the output volume from 1 to 0 over 64 frames (a change list).
        g.enqueue(contentsOf: [.setParameter(node: "mix", address: "input.1.enable", value: 1, rampDuration: 0),
                               .setParameter(node: "mix", address: "volume", value: 0, rampDuration: 64 / sr)])
        try g.update(waitUntilApplied: false)
        let y = renderFrames(g, frames: 128, channels: 2)
        let e = SignalMeasurement.worstError(y[0]) { n in 0.75 * h * (n < 64 ? 1 - Double(n) / 64 : 0) }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
        // All inputs disabled: the output is flagged silent.
        try mix.setParameter("input.0.enable", 0)
        try mix.setParameter("input.1.enable", 0)
        XCTAssertTrue(try XCTUnwrap(g.render(frameCount: 64)).isSilent)
    }

    func testInputAt44100IsConvertedTo48000() throws {
        // A 1 kHz tone of amplitude 0.5 generated at 44.1 kHz, mixed (mono, pan 0) at 48 kHz.
        let f = 1000.0
        let tone = formulaSource("tone", channels: 1, sampleRate: 44100) { _, t in Float(0.5 * sin(2 * Double.pi * f * Double(t) / 44100)) }
        let mix = MixerNode(id: "mix", sampleRate: sr)
        let g = try startedGraph([tone, mix], "tone -> mix -> out", slice: 512)
        XCTAssertEqual(mix.inputFormats, [.canonical(sampleRate: 48000, channelCount: 1)])
        XCTAssertEqual(mix.outputFormats, [.canonical(sampleRate: 48000, channelCount: 2)])
        let y = renderFrames(g, frames: 48000, channels: 2, slices: [512, 100, 37])
        // Past the converter's start-up: a least-squares fit of a 1 kHz sine at 48 kHz.
        let steady = Array(y[0][8000..<48000])
        let fit = toneFit(steady, frequency: f, sampleRate: sr)
        let expected = 0.5 * 0.5.squareRoot()
        print("mixer 44.1 kHz -> 48 kHz: amplitude error \(20 * log10(fit.amplitude / expected)) dB, residual \(20 * log10(fit.residualRMS / expected)) dB")
        XCTAssertEqual(20 * log10(fit.amplitude / expected), 0, accuracy: 0.05, "amplitude \(fit.amplitude)")
        XCTAssertLessThan(fit.residualRMS / expected, 1e-3, "the residual (distortion, noise) is below -60 dB")
        XCTAssertEqual(y[0], y[1])
        // The same with another slice pattern gives the same samples.
        let tone2 = formulaSource("tone", channels: 1, sampleRate: 44100) { _, t in Float(0.5 * sin(2 * Double.pi * f * Double(t) / 44100)) }
        let g2 = try startedGraph([tone2, MixerNode(id: "mix", sampleRate: sr)], "tone -> mix -> out", slice: 64)
        XCTAssertEqual(renderFrames(g2, frames: 48000, channels: 1, slices: [64, 1, 5])[0], y[0])
    }
}

/// The mixer tests' input signals: input `input`, channel `channel`, frame `t`.
func mixerTestSignal(_ input: Int, _ channel: Int, _ t: Int64) -> Double {
    0.2 * sin(Double(t) * (0.01 + 0.003 * Double(input)) + Double(channel)) + 0.05 * Double(channel + 1)
}
