// Tests of VariableRateResampler: passband and aliasing next to libsamplerate's medium converter (the real C library).
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class VariableRateResamplerTests: XCTestCase {
    /// `frames` output frames of a unit tone at `frequency` (Hz at `inputRate`) read at `rate`.
    func varispeed(frequency: Double, inputRate: Double, rate: Float, frames: Int) -> [Float] {
        let r = VariableRateResampler(channelCount: 1, maximumFrames: 512)
        var t = 0
        var out: [Float] = []
        while out.count < frames {
            let n = min(512, frames - out.count)
            r.rates.update(repeating: rate, count: n)
            r.process(frameCount: n) { channels, count in
                for i in 0..<count { channels[0][i] = Float(sin(2 * Double.pi * frequency * Double(t + i) / inputRate)) }
                t += count
            }
            out += UnsafeBufferPointer(start: r.output.list.channel(0), count: n)
        }
        return out
    }

    /// The same conversion by libsamplerate's SRC_SINC_MEDIUM_QUALITY (fixed ratio).
    func libsamplerateMedium(frequency: Double, inputRate: Double, outputRate: Double, frames: Int) throws -> [Float] {
        var t = 0
        let resampler = try Resampler(channelCount: 1, inputSampleRate: inputRate, outputSampleRate: outputRate, quality: .medium) { channels, count in
            for i in 0..<count { channels[0][i] = Float(sin(2 * Double.pi * frequency * Double(t + i) / inputRate)) }
            t += count
            return count
        }
        let out = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        defer { out.deallocate() }
        [out].withUnsafeBufferPointer { _ = resampler.read(into: $0, frameCount: frames) }
        return Array(UnsafeBufferPointer(start: out, count: frames))
    }

    func db(_ x: Double) -> Double { 20 * log10(max(x, 1e-12)) }

    /// Rate 2 is 96 kHz read as 48 kHz: a tone at 0.85 of the output's Nyquist passes, a tone
    /// at 1.1 of it (which would fold to 21.6 kHz) is removed. Measured: passband -0.0001 dB
    /// (medium -0.007 dB), alias -117 dB (medium -118 dB).
    func testRateTwoPassbandAndAliasingMatchLibsamplerateMedium() throws {
        let frames = 24000, window = 2000..<22000
        let pass = 0.85 * 24000.0, alias = 1.1 * 24000.0, folded = 48000 - alias
        let ours = (
            pass: ToneFit(varispeed(frequency: pass, inputRate: 96000, rate: 2, frames: frames)[window], sampleRate: 48000, frequencies: [pass]).tones[0].amplitude,
            alias: ToneFit(varispeed(frequency: alias, inputRate: 96000, rate: 2, frames: frames)[window], sampleRate: 48000, frequencies: [folded]).tones[0].amplitude)
        let theirs = (
            pass: ToneFit(try libsamplerateMedium(frequency: pass, inputRate: 96000, outputRate: 48000, frames: frames)[window], sampleRate: 48000, frequencies: [pass]).tones[0].amplitude,
            alias: ToneFit(try libsamplerateMedium(frequency: alias, inputRate: 96000, outputRate: 48000, frames: frames)[window], sampleRate: 48000, frequencies: [folded]).tones[0].amplitude)
        print("rate 2: passband \(db(ours.pass)) dB (libsamplerate medium \(db(theirs.pass)) dB), alias \(db(ours.alias)) dB (medium \(db(theirs.alias)) dB)")
        XCTAssertEqual(db(ours.pass), 0, accuracy: 0.01)
        XCTAssertLessThanOrEqual(abs(db(ours.pass)), abs(db(theirs.pass)), "the passband is at least as flat as medium's")
        XCTAssertLessThan(db(ours.alias), -105)
        XCTAssertLessThanOrEqual(db(ours.alias), db(theirs.alias) + 3, "aliasing within 3 dB of medium's")
    }

    /// Rate 0.5 is 24 kHz read as 48 kHz: the images above the input's Nyquist are removed.
    /// Measured: image -111 dB (medium -113 dB), residual -138 dB (medium -155 dB).
    func testRateOneHalfImagesMatchLibsamplerateMedium() throws {
        let frames = 24000, window = 2000..<22000
        let tone = 0.85 * 12000.0, image = 24000 - tone
        let ours = varispeed(frequency: tone, inputRate: 24000, rate: 0.5, frames: frames)
        let theirs = try libsamplerateMedium(frequency: tone, inputRate: 24000, outputRate: 48000, frames: frames)
        let fitOurs = ToneFit(ours[window], sampleRate: 48000, frequencies: [tone, image])
        let fitTheirs = ToneFit(theirs[window], sampleRate: 48000, frequencies: [tone, image])
        print("rate 0.5: passband \(db(fitOurs.tones[0].amplitude)) dB (medium \(db(fitTheirs.tones[0].amplitude)) dB), image \(db(fitOurs.tones[1].amplitude)) dB (medium \(db(fitTheirs.tones[1].amplitude)) dB), residual \(db(fitOurs.residualRMS)) dB (medium \(db(fitTheirs.residualRMS)) dB)")
        XCTAssertEqual(db(fitOurs.tones[0].amplitude), 0, accuracy: 0.01)
        XCTAssertLessThanOrEqual(abs(db(fitOurs.tones[0].amplitude)), abs(db(fitTheirs.tones[0].amplitude)))
        XCTAssertLessThan(db(fitOurs.tones[1].amplitude), -105)
        XCTAssertLessThanOrEqual(db(fitOurs.tones[1].amplitude), db(fitTheirs.tones[1].amplitude) + 3, "images within 3 dB of medium's")
        XCTAssertLessThan(db(fitOurs.residualRMS), -130)
    }

    /// Input sample `i` of channel `c` in the rate-step tests (zero before frame 0, as the
    /// resampler's history starts).
    static func stepInput(_ c: Int, _ i: Int) -> Double {
        i < 0 ? 0 : sin(0.05 * Double(i) * Double(c + 1)) + 0.3 * sin(0.31 * Double(i) + Double(c))
    }

    /// The resampler's definition evaluated directly: `fc·Σ x[i]·sinc(u)·w(u/64)`, `u = fc·(i - t)`.
    static func formula(channel c: Int, position t: Double, rate: Double) -> Double {
        if rate == 1, t == t.rounded(.down) { return stepInput(c, Int(t)) }
        let fc = VariableRateResampler.bandwidth * min(1, 1 / rate)
        let h = Double(VariableRateResampler.zeroCrossings)
        let reach = h / fc
        let i0b = VariableRateResampler.besselI0(VariableRateResampler.kaiserBeta)
        var sum = 0.0
        for i in Int((t - reach).rounded(.down))...Int((t + reach).rounded(.up)) {
            let u = fc * (Double(i) - t)
            guard abs(u) < h else { continue }
            let x = u / h
            let w = VariableRateResampler.besselI0(VariableRateResampler.kaiserBeta * (1 - x * x).squareRoot()) / i0b
            let sinc = u == 0 ? 1 : sin(Double.pi * u) / (Double.pi * u)
            sum += stepInput(c, i) * sinc * w
        }
        return fc * sum
    }

    /// Review item 1: after the history has dropped old frames at rate 1, a step to rate 2 or 4
    /// widens the kernel's reach backwards; every output frame must still equal the formula
    /// (before the fix the kernel read before the history: garbage or a crash).
    func testRateStepAfterHistoryDropMatchesFormula() {
        let channels = 2, slice = 64
        for stepRate in [Float(2), 4] {
            for stepAt in stride(from: 700, to: 1100, by: 13) {
                let r = VariableRateResampler(channelCount: channels, maximumFrames: slice)
                var fed = 0
                var position = 0.0
                var worst = 0.0
                var frame = 0
                while frame < stepAt + 160 {
                    for j in 0..<slice { r.rates[j] = frame + j < stepAt ? 1 : stepRate }
                    r.process(frameCount: slice) { ch, count in
                        for c in 0..<channels { for i in 0..<count { ch[c][i] = Float(Self.stepInput(c, fed + i)) } }
                        fed += count
                    }
                    for j in 0..<slice {
                        let rate = Double(r.rates[j])
                        if frame + j >= stepAt - 8 {
                            for c in 0..<channels {
                                let expected = Self.formula(channel: c, position: position, rate: rate)
                                worst = max(worst, abs(Double(r.output.list.channel(c)[j]) - expected))
                            }
                        }
                        position += rate
                    }
                    frame += slice
                }
                XCTAssertLessThan(worst, 1e-4, "rate 1 -> \(stepRate) at output frame \(stepAt)")
            }
        }
    }

    /// Review item 15: a NaN rate reads as 1 instead of trapping; infinities clamp to the range.
    func testNaNRateReadsAsOne() {
        XCTAssertEqual(VariableRateResampler.clampedRate(.nan), 1)
        XCTAssertEqual(VariableRateResampler.clampedRate(.infinity), VariableRateResampler.rateRange.upperBound)
        XCTAssertEqual(VariableRateResampler.clampedRate(-.infinity), VariableRateResampler.rateRange.lowerBound)
        let a = VariableRateResampler(channelCount: 1, maximumFrames: 64)
        let b = VariableRateResampler(channelCount: 1, maximumFrames: 64)
        a.rates.update(repeating: .nan, count: 64)
        b.rates.update(repeating: 1, count: 64)
        for resampler in [a, b] {
            var fed = 0
            resampler.process(frameCount: 64) { ch, count in
                for i in 0..<count { ch[0][i] = Float(Self.stepInput(0, fed + i)) }
                fed += count
            }
        }
        XCTAssertEqual(Array(UnsafeBufferPointer(start: a.output.list.channel(0), count: 64)),
                       Array(UnsafeBufferPointer(start: b.output.list.channel(0), count: 64)))
        XCTAssertEqual(a.position, 64)
    }
}
