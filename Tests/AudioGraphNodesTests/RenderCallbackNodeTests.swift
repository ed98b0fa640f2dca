// Tests of RenderCallbackNode: the closure sees each slice's sample time and fills the output.
import AudioGraphCore
import Foundation
import Synchronization
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class RenderCallbackNodeTests: XCTestCase {
    final class Calls: Sendable {
        let count = Atomic<Int>(0)
        let lastTime = Atomic<Int64>(-1)
    }

    func testCallbackFillsEachSliceAtItsSampleTime() throws {
        let calls = Calls()
        let node = RenderCallbackNode(id: "cb", channels: 2) { context, buffer in
            calls.count.wrappingAdd(1, ordering: .relaxed)
            calls.lastTime.store(context.sampleTime, ordering: .relaxed)
            for i in 0..<context.frameCount {
                buffer.channel(0)[i] = Float(context.sampleTime + Int64(i))
                buffer.channel(1)[i] = -Float(context.sampleTime + Int64(i))
            }
            return false
        }
        let g = try startedGraph([node], "cb -> out", slice: 64)
        XCTAssertEqual(node.outputFormats, [.canonical(sampleRate: 48000, channelCount: 2)])
        let y = renderFrames(g, frames: 300, channels: 2, slices: [64, 10, 33])
        XCTAssertEqual(y[0], (0..<300).map(Float.init))
        XCTAssertEqual(y[1], (0..<300).map { -Float($0) })
        // 300 frames in slices 64, 10, 33, ...: 64+10+33 = 107, twice = 214, then 64 + 10 + 12.
        XCTAssertEqual(calls.count.load(ordering: .relaxed), 9)
        XCTAssertEqual(calls.lastTime.load(ordering: .relaxed), 288)
    }

    func testSilentReturnFlagsTheOutput() throws {
        let node = RenderCallbackNode(id: "cb", channels: 1) { context, buffer in
            buffer.clear(frameCount: context.frameCount)
            return true
        }
        let g = try startedGraph([node], "cb -> out", slice: 64)
        XCTAssertTrue(try XCTUnwrap(g.render(frameCount: 64)).isSilent)
    }

    func testOwnSampleRate() throws {
        let node = formulaSource("cb", channels: 1, sampleRate: 44100) { _, t in Float(t) }
        let g = try startedGraph([node], "cb -> out", slice: 64)
        XCTAssertEqual(node.outputFormats, [.canonical(sampleRate: 44100, channelCount: 1)])
        XCTAssertEqual((g.outputNode as? GenericOutputNode)?.inputFormat, .canonical(sampleRate: 44100, channelCount: 1))
        XCTAssertEqual(renderFrames(g, frames: 5, channels: 1)[0], [0, 1, 2, 3, 4])
    }
}
