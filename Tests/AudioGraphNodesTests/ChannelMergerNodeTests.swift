// Tests of ChannelMergerNode: each input down-mixed to mono by the spec's speakers rules as one output channel.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class ChannelMergerNodeTests: XCTestCase {
    func testInputsAreDownMixedToMonoChannels() throws {
        let stereo = formulaSource("st", channels: 2) { c, _ in c == 0 ? 0.5 : 0.25 }
        let six = formulaSource("six", channels: 6) { c, _ in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6][c] }
        let mono = formulaSource("mono", channels: 1) { _, n in Float(n) * 0.001 }
        let merge = try ChannelMergerNode(id: "merge", inputs: 4)
        let g = try startedGraph([stereo, six, mono, merge], "st -> merge:0; six -> merge:1; mono -> merge:3; merge -> out", slice: 64)
        let y = renderFrames(g, frames: 64, channels: 4)
        XCTAssertEqual(merge.outputFormats[0].channelCount, 4)
        XCTAssertEqual(y[0][5], 0.375)
        // 5.1 → mono: √½(L+R) + C + ½(SL+SR) (LFE dropped).
        XCTAssertEqual(Double(y[1][5]), 0.5.squareRoot() * 0.3 + 0.3 + 0.5 * (0.5 + 0.6), accuracy: 1e-7)
        XCTAssertEqual(y[2], [Float](repeating: 0, count: 64))
        XCTAssertEqual(y[3][9], Float(9) * 0.001)
    }
}
