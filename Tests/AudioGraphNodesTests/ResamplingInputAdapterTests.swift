// Tests of the implicit input rate conversion (through mixers): level, frequency and timing of tones.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class ResamplingInputAdapterTests: XCTestCase {
    /// Fits `a*sin + b*cos` at `f`: amplitude and phase (radians, of a sine) of the tone.
    private func fit(_ x: ArraySlice<Float>, f: Double, sr: Double, offset: Int) -> (amplitude: Double, phase: Double) {
        var ss = 0.0, cc = 0.0, sc = 0.0, ys = 0.0, yc = 0.0
        for (k, y) in x.enumerated() {
            let w = 2 * Double.pi * f * Double(offset + k) / sr
            let s = sin(w), c = cos(w)
            ss += s * s; cc += c * c; sc += s * c; ys += Double(y) * s; yc += Double(y) * c
        }
        let det = ss * cc - sc * sc
        let a = (ys * cc - yc * sc) / det, b = (yc * ss - ys * sc) / det
        return ((a * a + b * b).squareRoot(), atan2(b, a))
    }

    private func convert(from sourceRate: Double, to graphRate: Double, channels: Int, f: Double, slice: Int) throws -> [[Float]] {
        let tone = formulaSource("tone", channels: channels, sampleRate: sourceRate) { c, t in
            Float((c == 0 ? 0.5 : 0.25) * sin(2 * Double.pi * f * Double(t) / sourceRate))
        }
        let mix = MixerNode(id: "mix", sampleRate: graphRate, properties: MixerProperties(channels: channels))
        let g = try startedGraph([tone, mix], "tone -> mix -> out", sampleRate: graphRate, slice: slice)
        XCTAssertEqual(mix.inputFormats, [.canonical(sampleRate: graphRate, channelCount: channels)])
        return renderFrames(g, frames: Int(graphRate), channels: channels)
    }

    func testDownsampling48000To44100KeepsLevelFrequencyAndTiming() throws {
        let y = try convert(from: 48000, to: 44100, channels: 2, f: 3000, slice: 256)
        for (c, expected) in [(0, 0.5), (1, 0.25)] {
            let r = fit(y[c][10000..<44100], f: 3000, sr: 44100, offset: 10000)
            XCTAssertEqual(20 * log10(r.amplitude / expected), 0, accuracy: 0.05, "channel \(c)")
            // Aligned on the timeline: the tone's phase at frame n is 2*pi*f*n/44100 (no converter delay).
            XCTAssertEqual(r.phase, 0, accuracy: 0.01, "channel \(c): phase \(r.phase) rad")
        }
    }

    func testUpsampling22050To48000() throws {
        let y = try convert(from: 22050, to: 48000, channels: 1, f: 5000, slice: 512)
        let r = fit(y[0][8000..<48000], f: 5000, sr: 48000, offset: 8000)
        XCTAssertEqual(20 * log10(r.amplitude / 0.5), 0, accuracy: 0.05)
        XCTAssertEqual(r.phase, 0, accuracy: 0.01, "phase \(r.phase) rad")
        // Nothing above the source's Nyquist frequency (11025 Hz) but conversion residue.
        let image = dftMagnitude(Array(y[0][8000..<48000]), frequency: 22050 - 5000, sampleRate: 48000)
        XCTAssertLessThan(image, 1e-4, "image of the tone at 17050 Hz")
    }

    func testResultDoesNotDependOnTheSliceSize() throws {
        let a = try convert(from: 44100, to: 48000, channels: 1, f: 1000, slice: 1024)
        let b = try convert(from: 44100, to: 48000, channels: 1, f: 1000, slice: 7)
        XCTAssertEqual(a, b)
    }
}
