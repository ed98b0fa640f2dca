// Tests of GenericOutputNode: it is the output, takes any rate, and reports its client format.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class GenericOutputNodeTests: XCTestCase {
    func testClientFormatDefaultsToTheInputFormat() throws {
        let out = GenericOutputNode(id: "out")
        XCTAssertTrue(out.isOutputNode)
        XCTAssertEqual(out.inputBusCount, 1)
        XCTAssertEqual(out.outputBusCount, 0)
        XCTAssertNil(out.clientFormat, "unknown before initialize")
        let src = formulaSource("src", channels: 3) { c, _ in Float(c) }
        let g = try startedGraph([src], "src -> out", output: out)
        XCTAssertEqual(out.inputFormat, .canonical(sampleRate: 48000, channelCount: 3))
        XCTAssertEqual(out.clientFormat, .canonical(sampleRate: 48000, channelCount: 3))
        let r = try XCTUnwrap(g.render(frameCount: 8))
        XCTAssertEqual(r.channelCount, 3)
        XCTAssertEqual(r.buffer.channel(2)[7], 2)
    }

    func testDeclaredClientFieldsWin() throws {
        let out = GenericOutputNode(id: "out", clientFormat: PartialStreamFormat(channelCount: 1, sampleType: .int16, isInterleaved: true))
        let src = formulaSource("src", channels: 2, sampleRate: 44100) { _, _ in 0.5 }
        _ = try startedGraph([src], "src -> out", output: out)
        XCTAssertEqual(out.inputFormat, .canonical(sampleRate: 44100, channelCount: 2), "any rate is accepted as it is")
        XCTAssertEqual(out.clientFormat, StreamFormat(sampleRate: 44100, channelCount: 1, sampleType: .int16, isInterleaved: true))
    }

    func testUnconnectedOutputRendersNothing() throws {
        let out = GenericOutputNode(id: "out")
        let g = try startedGraph([], "", output: out)
        XCTAssertNil(out.inputFormat)
        XCTAssertNil(g.render(frameCount: 64))
    }
}
