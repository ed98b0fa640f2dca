// Tests of ChannelSplitterNode: each input channel on its own output bus, silence beyond.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class ChannelSplitterNodeTests: XCTestCase {
    func testEachChannelOnItsBusAndSilenceBeyond() throws {
        let src = formulaSource("src", channels: 3) { c, n in Float(c + 1) * 0.1 + Float(n % 7) * 0.01 }
        let split = try ChannelSplitterNode(id: "split", outputs: 4)
        // split:2 -> merge:0, split:0 -> merge:1, split:3 -> merge:2: a channel permutation.
        let merge = try ChannelMergerNode(id: "merge", inputs: 3)
        let g = try startedGraph([src, split, merge], "split:2 -> merge:0; split:0 -> merge:1; split:3 -> merge:2; src -> split; merge -> out", slice: 128)
        let y = renderFrames(g, frames: 300, channels: 3, slices: [128, 5, 77])
        for n in 0..<300 {
            XCTAssertEqual(y[0][n], 0.3 + Float(n % 7) * 0.01)
            XCTAssertEqual(y[1][n], 0.1 + Float(n % 7) * 0.01)
            XCTAssertEqual(y[2][n], 0)
        }
        XCTAssertEqual(split.outputFormats.map(\.channelCount), [1, 1, 1, 1])
    }

    func testOutputCountIsChecked() {
        XCTAssertThrowsError(try ChannelSplitterNode(id: "s", outputs: 0))
        XCTAssertThrowsError(try ChannelSplitterNode(id: "s", outputs: 33))
        XCTAssertEqual(try ChannelSplitterNode(id: "s").outputBusCount, 6)
    }
}
