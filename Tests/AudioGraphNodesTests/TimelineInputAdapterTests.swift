// Tests of TimelineInputAdapter and RenderInputs.pull(_:frameCount:): a node that reads its input twice as fast.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

/// Reads two input frames per output frame and keeps the first of each pair: y[n] = x[2n].
private final class DecimatingNode: GraphNode, @unchecked Sendable {
    init(id: String) { super.init(id: id, typeName: "decimate", inputBusCount: 1, outputBusCount: 1, parameters: []) }
    override var pullsInputsOnTheirOwnTimeline: Bool { true }
    override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                   maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        TimelineInputAdapter()
    }
    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        DecimatingKernel(nodeID: id, outputFormats: outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                         parameters: [])
    }
}

private final class DecimatingKernel: NodeKernel, @unchecked Sendable {
    override func render(context: RenderContext, inputs: RenderInputs) {
        let out = outputs[0]
        var produced = 0
        while produced < context.frameCount {
            // Pieces of at most the maximum slice, an even number of input frames each.
            let m = min(2 * (context.frameCount - produced), maximumFramesPerSlice & ~1)
            guard let input = inputs.pull(0, frameCount: m) else { break }
            for c in 0..<out.channelCount {
                for i in 0..<(m / 2) { out.channel(c)[produced + i] = input.buffer.channel(c)[2 * i] }
            }
            produced += m / 2
        }
        outputIsSilent[0] = false
    }
}

/// Pulls twice the maximum slice at once: a programming error RenderInputs.pull(_:frameCount:) stops.
private final class GreedyNode: GraphNode, @unchecked Sendable {
    init(id: String) { super.init(id: id, typeName: "greedy", inputBusCount: 1, outputBusCount: 1, parameters: []) }
    override var pullsInputsOnTheirOwnTimeline: Bool { true }
    override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                   maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        TimelineInputAdapter()
    }
    override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        GreedyKernel(nodeID: id, outputFormats: outputFormats, maximumFramesPerSlice: maximumFramesPerSlice, parameters: [])
    }
}

private final class GreedyKernel: NodeKernel, @unchecked Sendable {
    override func render(context: RenderContext, inputs: RenderInputs) {
        _ = inputs.pull(0, frameCount: 2 * maximumFramesPerSlice)
        outputs[0].clear(frameCount: context.frameCount)
        outputIsSilent[0] = true
    }
}

final class TimelineInputAdapterTests: XCTestCase {
    func testANodeReadsItsInputOnTheInputsOwnTimeline() throws {
        let ramp = formulaSource("ramp", channels: 2) { c, n in Float(n) + (c == 0 ? 0 : 0.5) }
        for slice in [64, 100, 512] {
            let g = try startedGraph([ramp, DecimatingNode(id: "d")], "ramp -> d -> out", slice: slice)
            let y = renderFrames(g, frames: 3000, channels: 2)
            for n in 0..<3000 {
                guard y[0][n] == Float(2 * n), y[1][n] == Float(2 * n) + 0.5 else {
                    XCTFail("slice \(slice), frame \(n): \(y[0][n]), \(y[1][n])")
                    break
                }
            }
        }
    }

    /// Review item 16: pulling more than maximumFramesPerSlice at once stops with a one-line
    /// precondition message (as AudioGraph.render(frameCount:) does) instead of overrunning the
    /// source's buffers.
    func testPullingMoreThanTheMaximumSliceStops() throws {
        if TrapCheck.isChild {
            let src = formulaSource("src", channels: 1) { _, n in Float(n) }
            let g = try startedGraph([src, GreedyNode(id: "g")], "src -> g -> out", slice: 64)
            _ = renderFrames(g, frames: 64, channels: 1)
            return
        }
        let r = try TrapCheck.rerun("AudioGraphNodesTests.TimelineInputAdapterTests/testPullingMoreThanTheMaximumSliceStops")
        XCTAssertTrue(r.stoppedBySignal, r.standardError)
        XCTAssertEqual(r.lines(containing: "exceeds maximumFramesPerSlice").count, 1, r.standardError)
    }

    func testAnInputAtAnotherRateIsRefused() throws {
        // The node runs at 48 kHz (declared) and does not convert rates: a 44.1 kHz input is an
        // error, not an adapter at the wrong rate.
        let src = formulaSource("src", channels: 1, sampleRate: 44100) { _, _ in 0 }
        let d = DecimatingNode(id: "d")
        d.declaredFormat.sampleRate = 48000
        XCTAssertThrowsError(try startedGraph([src, d], "src -> d -> out")) { error in
            XCTAssertTrue("\(error)".contains("44100"), "\(error)")
        }
    }
}
