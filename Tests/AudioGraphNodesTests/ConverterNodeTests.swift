// Tests of ConverterNode rendered offline: rate conversion quality, channel maps, up-mix, sample types.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class ConverterNodeTests: XCTestCase {

    func sine44k(_ channels: Int = 1) -> RenderCallbackNode {
        formulaSource("src", channels: channels, sampleRate: 44100) { c, n in
            Float(0.5 / Double(c + 1) * sin(2 * Double.pi * 1000 * Double(n) / 44100))
        }
    }

    func testRateConversion44100To48000Best() throws {
        let conv = ConverterNode(id: "conv", properties: ConverterProperties(format: FormatDescription(sampleRate: 48000)))
        let g = try startedGraph([sine44k(), conv], "src -> conv -> out")
        XCTAssertEqual(conv.outputFormats[0].sampleRate, 48000)
        let y = renderFrames(g, frames: 48000, channels: 1)[0]
        let seg = Array(y[2000..<47000])
        let fit = toneFit(seg, frequency: 1000, sampleRate: 48000)
        XCTAssertEqual(20 * log10(fit.amplitude / 0.5), 0, accuracy: 0.01)
        let thdn = 20 * log10(fit.residualRMS / (fit.amplitude / 2.0.squareRoot()))
        XCTAssertLessThan(thdn, -90)
    }

    func testSliceIndependentConversion() throws {
        func render(slice: Int, pattern: [Int]) throws -> [[Float]] {
            let conv = ConverterNode(id: "conv", properties: ConverterProperties(format: FormatDescription(sampleRate: 48000)))
            return renderFrames(try startedGraph([sine44k(2), conv], "src -> conv -> out", slice: slice),
                                frames: 10000, channels: 2, slices: pattern)
        }
        let a = try render(slice: 512, pattern: [512])
        XCTAssertEqual(a, try render(slice: 64, pattern: [1, 64, 7]))
        XCTAssertEqual(a, try render(slice: 4096, pattern: [4096]))
        XCTAssertEqual(a, try render(slice: 1, pattern: [1]))
        XCTAssertEqual(a, try render(slice: 64, pattern: [64]))
    }

    func testChannelMap() throws {
        let src = formulaSource("src", channels: 2) { c, n in Float(c == 0 ? 0.25 : -0.5) * Float(n % 7) }
        let conv = ConverterNode(id: "conv", properties: ConverterProperties(channelMap: [1, -1, 0]))
        let g = try startedGraph([src, conv], "src -> conv -> out", slice: 64)
        XCTAssertEqual(conv.outputFormats[0].channelCount, 3)
        let y = renderFrames(g, frames: 200, channels: 3)
        for n in 0..<200 {
            XCTAssertEqual(y[0][n], -0.5 * Float(n % 7))
            XCTAssertEqual(y[1][n], 0)
            XCTAssertEqual(y[2][n], 0.25 * Float(n % 7))
        }
    }

    func testUpAndDownMixWithoutMap() throws {
        let mono = formulaSource("src", channels: 1) { _, n in Float(n % 5) * 0.1 }
        let up = ConverterNode(id: "conv", properties: ConverterProperties(format: FormatDescription(channels: 2)))
        let y = renderFrames(try startedGraph([mono, up], "src -> conv -> out", slice: 64), frames: 100, channels: 2)
        XCTAssertEqual(y[0], y[1])
        XCTAssertEqual(y[0][3], 0.3, accuracy: 1e-7)
        // 6 -> 2: L + s*(C + SL), R + s*(C + SR), LFE dropped.
        let six = formulaSource("src", channels: 6) { c, _ in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6][c] }
        let down = ConverterNode(id: "conv", properties: ConverterProperties(format: FormatDescription(channels: 2)))
        let z = renderFrames(try startedGraph([six, down], "src -> conv -> out", slice: 64), frames: 10, channels: 2)
        let s = 0.5.squareRoot()
        XCTAssertEqual(Double(z[0][0]), 0.1 + s * (0.3 + 0.5), accuracy: 1e-6)
        XCTAssertEqual(Double(z[1][0]), 0.2 + s * (0.3 + 0.6), accuracy: 1e-6)
    }

    func testIntegerSampleTypeQuantizes() throws {
        let src = formulaSource("src", channels: 1) { _, n in Float(sin(Double(n) * 0.01) * 0.7) }
        let conv = ConverterNode(id: "conv", properties: ConverterProperties(format: FormatDescription(sampleType: .int16)))
        let g = try startedGraph([src, conv], "src -> conv -> out", slice: 128)
        XCTAssertEqual(conv.outputFormats[0].sampleType, .int16)
        let y = renderFrames(g, frames: 1000, channels: 1)[0]
        for n in 0..<1000 {
            let x = sin(Double(n) * 0.01) * 0.7
            let q = Double(y[n]) * 32768
            XCTAssertEqual(q, q.rounded(), "frame \(n) is on the int16 grid")
            XCTAssertEqual(Double(y[n]), (Double(Float(x)) * 32768).rounded() / 32768, accuracy: 1e-9)
        }
    }

    func testQualityChangesWhileRunning() throws {
        let conv = ConverterNode(id: "conv", properties: ConverterProperties(format: FormatDescription(sampleRate: 48000)))
        let g = try startedGraph([sine44k(), conv], "src -> conv -> out")
        _ = renderFrames(g, frames: 4800, channels: 1)
        XCTAssertEqual(conv.testOnly_inputQuality, .best)
        try conv.setProperty("quality", "linear")
        try g.update(waitUntilApplied: false)   // adopted at the next render call
        XCTAssertEqual(conv.properties.quality, .linear)
        let y = renderFrames(g, frames: 9600, channels: 1)[0]
        XCTAssertEqual(conv.testOnly_inputQuality, .linear, "the kernel swapped the resampler in")
        let fit = toneFit(Array(y[2000...]), frequency: 1000, sampleRate: 48000)
        XCTAssertEqual(fit.amplitude, 0.5, accuracy: 0.01)
        XCTAssertThrowsError(try conv.setProperty("quality", "superb"))
        XCTAssertThrowsError(try conv.setProperty("channelMap", [0]))
    }
}
