// Tests of AudioGraph: editing while open, errors, format propagation, life cycle, rendering.
import XCTest
import AudioGraphTesting
@testable import AudioGraphCore

final class AudioGraphTests: XCTestCase {
    // MARK: Editing while open

    func testEditsWhileOpenApplyAtOnce() throws {
        let g = try makeGraph([CountingSourceNode("a"), CountingSourceNode("b"), GainNode("g"), TestOutputNode()],
                              "a -> g -> out")
        XCTAssertEqual(topologyText(g), "a:0 -> g:0\ng:0 -> out:0")
        try g.disconnect("g")
        try g.connect("b", to: "g")
        XCTAssertEqual(topologyText(g), "b:0 -> g:0\ng:0 -> out:0")
        try g.removeNode("a")
        XCTAssertNil(g.node("a"))
        XCTAssertEqual(g.nodes.map(\.id), ["b", "g", "out"])
        XCTAssertEqual(g.pendingChanges.count, 0)
        XCTAssertEqual(g.state, .open)
    }

    func testRemoveNodeWhileOpenDropsItsConnections() throws {
        let g = try makeGraph([CountingSourceNode("a"), GainNode("g"), TestOutputNode()], "a -> g -> out")
        try g.removeNode("g")
        XCTAssertEqual(g.connections, [])
        XCTAssertEqual(g.nodes.map(\.id), ["a", "out"])
    }

    // MARK: Errors

    func testDuplicateNodeIsRejected() throws {
        let g = try makeGraph([CountingSourceNode("a")], "")
        XCTAssertThrowsError(try g.addNode(GainNode("a"))) { XCTAssertEqual($0 as? AudioGraphError, .duplicateNode("a")) }
        XCTAssertEqual(g.nodes.count, 1)
    }

    func testMissingNodeIsRejected() throws {
        let g = try makeGraph([CountingSourceNode("a"), TestOutputNode()], "")
        XCTAssertThrowsError(try g.connect("a", to: "nope")) { XCTAssertEqual($0 as? AudioGraphError, .nodeNotFound("nope")) }
        XCTAssertThrowsError(try g.connect("nope", to: "out")) { XCTAssertEqual($0 as? AudioGraphError, .nodeNotFound("nope")) }
        XCTAssertThrowsError(try g.removeNode("nope")) { XCTAssertEqual($0 as? AudioGraphError, .nodeNotFound("nope")) }
        XCTAssertThrowsError(try g.disconnect("nope")) { XCTAssertEqual($0 as? AudioGraphError, .nodeNotFound("nope")) }
    }

    func testBusOutOfRangeIsRejected() throws {
        let g = try makeGraph([CountingSourceNode("a"), SumNode("s"), TestOutputNode()], "")
        XCTAssertThrowsError(try g.connect("a", outputBus: 1, to: "s")) {
            XCTAssertEqual($0 as? AudioGraphError, .busOutOfRange(node: "a", scope: .output, bus: 1, count: 1))
        }
        XCTAssertThrowsError(try g.connect("a", outputBus: 0, to: "s", inputBus: 2)) {
            XCTAssertEqual($0 as? AudioGraphError, .busOutOfRange(node: "s", scope: .input, bus: 2, count: 2))
        }
        XCTAssertThrowsError(try g.connect("a", outputBus: 0, to: "s", inputBus: -1)) {
            XCTAssertEqual($0 as? AudioGraphError, .busOutOfRange(node: "s", scope: .input, bus: -1, count: 2))
        }
        // The output node has no output bus at all.
        XCTAssertThrowsError(try g.connect("out", to: "s")) {
            XCTAssertEqual($0 as? AudioGraphError, .busOutOfRange(node: "out", scope: .output, bus: 0, count: 0))
        }
        XCTAssertThrowsError(try g.disconnect("s", inputBus: 5)) {
            XCTAssertEqual($0 as? AudioGraphError, .busOutOfRange(node: "s", scope: .input, bus: 5, count: 2))
        }
        XCTAssertEqual(g.connections, [])
    }

    func testInputAlreadyConnectedIsRejected() throws {
        let g = try makeGraph([CountingSourceNode("a"), CountingSourceNode("b"), GainNode("g"), TestOutputNode()], "a -> g")
        XCTAssertThrowsError(try g.connect("b", to: "g")) {
            XCTAssertEqual($0 as? AudioGraphError, .inputAlreadyConnected(node: "g", bus: 0))
        }
        XCTAssertEqual(topologyText(g), "a:0 -> g:0")
        XCTAssertThrowsError(try g.disconnect("out")) {
            XCTAssertEqual($0 as? AudioGraphError, .inputNotConnected(node: "out", bus: 0))
        }
    }

    func testCyclesAreRejected() throws {
        let g = try makeGraph([GainNode("g1"), GainNode("g2"), GainNode("g3"), SumNode("s"), TestOutputNode()],
                              "g1 -> g2 -> g3")
        XCTAssertThrowsError(try g.connect("g3", to: "g1")) {
            guard case .cycle = $0 as? AudioGraphError else { return XCTFail("\($0)") }
        }
        // Self-loop.
        XCTAssertThrowsError(try g.connect("s", outputBus: 0, to: "s", inputBus: 1)) {
            XCTAssertEqual($0 as? AudioGraphError, .cycle(node: "s"))
        }
        XCTAssertThrowsError(try g.connect("g1", to: "g1")) { XCTAssertEqual($0 as? AudioGraphError, .cycle(node: "g1")) }
        XCTAssertEqual(topologyText(g), "g1:0 -> g2:0\ng2:0 -> g3:0")
        // Not a cycle: a diamond.
        try g.connect("g3", to: "s")
        try g.connect("g1", outputBus: 0, to: "s", inputBus: 1)
    }

    func testOutputNodeCountMustBeOne() throws {
        let none = try makeGraph([CountingSourceNode("a"), GainNode("g")], "a -> g")
        XCTAssertThrowsError(try none.initialize()) { XCTAssertEqual($0 as? AudioGraphError, .outputNodeCount(0)) }
        XCTAssertEqual(none.state, .open)
        XCTAssertNil(none.outputNode)

        let two = try makeGraph([CountingSourceNode("a"), TestOutputNode("o1"), TestOutputNode("o2")], "a -> o1; a -> o2")
        XCTAssertThrowsError(try two.initialize()) { XCTAssertEqual($0 as? AudioGraphError, .outputNodeCount(2)) }
        XCTAssertEqual(two.state, .open)
        XCTAssertNil(two.outputNode)
    }

    // MARK: Format propagation

    func testEffectInheritsItsInputFormat() throws {
        let a = CountingSourceNode("a", channels: 3)
        let g1 = GainNode("g1"), g2 = GainNode("g2")
        let out = TestOutputNode()
        let g = try makeGraph([a, g1, g2, out], "a -> g1 -> g2 -> out", sampleRate: 32000)
        try g.initialize()
        XCTAssertEqual(a.outputFormats, [.canonical(sampleRate: 32000, channelCount: 3)])
        XCTAssertEqual(g1.inputFormats, [.canonical(sampleRate: 32000, channelCount: 3)])
        XCTAssertEqual(g1.outputFormats, [.canonical(sampleRate: 32000, channelCount: 3)])
        XCTAssertEqual(g2.outputFormats, [.canonical(sampleRate: 32000, channelCount: 3)])
        XCTAssertEqual(out.inputFormats, [.canonical(sampleRate: 32000, channelCount: 3)])
        XCTAssertEqual(out.outputFormats, [])
        // A source at its own declared rate: the effect follows it.
        let b = CountingSourceNode("b", sampleRate: 44100)
        let g3 = GainNode("g3")
        let h = try makeGraph([b, g3, TestOutputNode()], "b -> g3 -> out")
        try h.initialize()
        XCTAssertEqual(g3.outputFormats, [.canonical(sampleRate: 44100, channelCount: 1)])
    }

    func testDeclaredFormatWins() throws {
        let a = CountingSourceNode("a", value: 0.5, channels: 2)
        let mono = GainNode("g", declaredFormat: PartialStreamFormat(channelCount: 1))
        let out = TestOutputNode()
        let g = try makeGraph([a, mono, out], "a -> g -> out")
        try g.initialize()
        XCTAssertEqual(mono.inputFormats, [.canonical(sampleRate: 48000, channelCount: 2)])
        XCTAssertEqual(mono.outputFormats, [.canonical(sampleRate: 48000, channelCount: 1)])
        XCTAssertEqual(out.inputFormats, [.canonical(sampleRate: 48000, channelCount: 1)])
        try g.start()
        let r = try XCTUnwrap(g.render(frameCount: 16))
        XCTAssertEqual(r.channelCount, 1)
        XCTAssertEqual(r.buffer.channel(0)[15], 0.5)
    }

    func testRateMismatchIntoANonConvertingNodeThrowsNamingBoth() throws {
        let a = CountingSourceNode("fast", sampleRate: 48000)
        let b = CountingSourceNode("slow", sampleRate: 44100)
        let g = try makeGraph([a, b, SumNode("sum"), TestOutputNode()], "slow -> sum:0; fast -> sum:1; sum -> out")
        XCTAssertThrowsError(try g.initialize()) { error in
            XCTAssertEqual(error as? AudioGraphError,
                           .sampleRateMismatch(source: "fast", sourceRate: 48000, destination: "sum", destinationRate: 44100))
            let text = "\(error)"
            for word in ["fast", "sum", "48000", "44100"] { XCTAssertTrue(text.contains(word), text) }
        }
        XCTAssertEqual(g.state, .open)
        // A declared rate on an effect is a mismatch too.
        let c = CountingSourceNode("c", sampleRate: 44100)
        let h = try makeGraph([c, GainNode("g", declaredFormat: PartialStreamFormat(sampleRate: 48000)), TestOutputNode()],
                              "c -> g -> out")
        XCTAssertThrowsError(try h.initialize()) {
            XCTAssertEqual($0 as? AudioGraphError,
                           .sampleRateMismatch(source: "c", sourceRate: 44100, destination: "g", destinationRate: 48000))
        }
    }

    // MARK: Life cycle

    func testLifeCycleStates() throws {
        let a = CountingSourceNode("a")
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        XCTAssertEqual(g.state, .open)
        XCTAssertFalse(g.isInitialized)
        XCTAssertThrowsError(try g.start()) { guard case .invalidState = $0 as? AudioGraphError else { return XCTFail() } }
        XCTAssertNil(a.kernel)
        try g.initialize()
        XCTAssertEqual(g.state, .initialized)
        XCTAssertNotNil(a.kernel)
        XCTAssertThrowsError(try g.initialize()) { guard case .invalidState = $0 as? AudioGraphError else { return XCTFail() } }
        try g.start()
        XCTAssertEqual(g.state, .running)
        XCTAssertTrue(g.isRunning)
        g.stop()
        XCTAssertEqual(g.state, .initialized)
        g.stop()  // stopping twice is harmless
        XCTAssertEqual(g.state, .initialized)
        try g.start()
        g.uninitialize()
        XCTAssertEqual(g.state, .open)
        XCTAssertNil(a.kernel)
        XCTAssertEqual(g.testOnly_livePlanCount, 0)
        // Open again: edits apply at once, and it initializes again.
        try g.disconnect("out")
        XCTAssertEqual(g.connections, [])
        try g.connect("a", to: "out")
        try g.initialize()
        XCTAssertEqual(g.state, .initialized)
    }

    func testRenderBeforeInitializeOrWithNothingConnectedReturnsNil() throws {
        let g = try makeGraph([CountingSourceNode("a"), TestOutputNode()], "")
        XCTAssertNil(g.render(frameCount: 64))
        XCTAssertEqual(g.renderSampleTime, 0)
        try g.initialize()
        try g.start()
        XCTAssertNil(g.render(frameCount: 64), "nothing is connected to the output")
        XCTAssertNil(g.render(frameCount: 0))
    }

    func testRenderAboveTheMaximumStopsTheProgramWithOneLine() throws {
        let g = try makeGraph([CountingSourceNode("a", mode: .localTime), TestOutputNode()], "a -> out",
                              maximumFramesPerSlice: 32)
        try g.initialize()
        try g.start()
        XCTAssertNotNil(g.render(frameCount: 32))
        XCTAssertEqual(g.renderSampleTime, 32)
        if TrapCheck.isChild {
            _ = g.render(frameCount: 100)
            return
        }
        let r = try TrapCheck.rerun("AudioGraphCoreTests.AudioGraphTests/testRenderAboveTheMaximumStopsTheProgramWithOneLine")
        XCTAssertTrue(r.stoppedBySignal, "status \(r.status): \(r.standardError)")
        XCTAssertEqual(r.lines(containing: "100 frames exceeds maximumFramesPerSlice 32").count, 1, r.standardError)
    }

    // MARK: Rendering

    func testNodesPulledEverySliceRenderWithoutAConsumer() throws {
        // "a" feeds the output; "b" feeds a sink that nothing downstream pulls.
        let a = CountingSourceNode("a", mode: .localTime), b = CountingSourceNode("b", mode: .localTime)
        let sink = GainNode("sink")
        sink.pulledEverySlice = true
        let idle = GainNode("idle")
        let g = try makeGraph([a, b, sink, idle, TestOutputNode()], "a -> out; b -> sink; b -> idle")
        try g.initialize()
        try g.start()
        for _ in 0..<5 { _ = g.render(frameCount: 64) }
        XCTAssertEqual(sink.probe.renders, 5, "a sink renders every slice")
        XCTAssertEqual(b.probe.renders, 5, "its source renders for it, once per slice")
        XCTAssertEqual(idle.probe.renders, 0, "a node that nothing pulls does not render")
        XCTAssertEqual(a.probe.renders, 5)
    }

    func testSetParameterRampDurationIsInSecondsOfTheNodesRate() throws {
        let gain = GainNode("g", gain: 0)
        let g = try makeGraph([CountingSourceNode("a", mode: .constant), gain, TestOutputNode()], "a -> g -> out")
        try g.initialize()
        try g.start()
        try gain.setParameter("gain", 1, rampDuration: 64 / 48000)
        let first = try XCTUnwrap(g.render(frameCount: 64)).buffer.channel(0)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        defer { out.deallocate() }
        out.update(from: first, count: 64)
        out.advanced(by: 64).update(from: try XCTUnwrap(g.render(frameCount: 64)).buffer.channel(0), count: 64)
        // A 64-frame linear ramp from 0 to 1 (frame i has i/64), then 1: 64 frames at 48 kHz.
        for i in [0, 1, 31, 63] { XCTAssertEqual(Double(out[i]), Double(i) / 64, accuracy: 1e-6, "frame \(i)") }
        XCTAssertEqual(out[64], 1)
        XCTAssertEqual(out[100], 1)
        XCTAssertThrowsError(try gain.setParameter("gain", 1, rampDuration: -1))
    }

    func testSampleTimeAdvancesByFrameCount() throws {
        let a = CountingSourceNode("a", mode: .localTime)
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        try g.initialize()
        try g.start()
        var expected: Int64 = 0
        for n in [1, 64, 17, 33, 64, 2] {
            let s = renderSlice(g, frames: n)
            XCTAssertEqual(a.probe.lastSampleTime.load(ordering: .acquiring), expected)
            // The source's sample i is its frame since start: the slice's sample time + i.
            XCTAssertEqual(s, (0..<n).map { Float(expected + Int64($0)) })
            expected += Int64(n)
            XCTAssertEqual(g.renderSampleTime, expected)
        }
    }

    func testFanOutRendersTheSourceOncePerSlice() throws {
        let a = CountingSourceNode("a", value: 0.25)
        let g1 = GainNode("g1", gain: 2), g2 = GainNode("g2", gain: 4)
        let g = try makeGraph([a, g1, g2, SumNode("s"), TestOutputNode()], """
            a -> g1 -> s:0
            a -> g2 -> s:1
            s -> out
            """)
        try g.initialize()
        try g.start()
        for slice in 1...10 {
            let x = renderSlice(g, frames: 64)
            XCTAssertEqual(x, [Float](repeating: 0.25 * 2 + 0.25 * 4, count: 64))
            XCTAssertEqual(a.probe.renders, slice, "one render per slice, whatever the fan-out")
            XCTAssertEqual(g1.probe.renders, slice)
            XCTAssertEqual(g2.probe.renders, slice)
        }
        // One output bus into both inputs of the same node.
        let b = CountingSourceNode("b", value: 3)
        let h = try makeGraph([b, SumNode("s"), TestOutputNode()], "b -> s:0; b -> s:1; s -> out")
        try h.initialize()
        try h.start()
        XCTAssertEqual(renderSlice(h, frames: 8), [Float](repeating: 6, count: 8))
        XCTAssertEqual(b.probe.renders, 1)
    }

    func testSilenceFlagPropagates() throws {
        let quiet = CountingSourceNode("q", mode: .silent)
        let g = try makeGraph([quiet, GainNode("g", gain: 5), TestOutputNode()], "q -> g -> out")
        try g.initialize()
        try g.start()
        let r = try XCTUnwrap(g.render(frameCount: 64))
        XCTAssertTrue(r.isSilent)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: r.buffer.channel(0), count: 64)), [Float](repeating: 0, count: 64))

        let q2 = CountingSourceNode("q2", mode: .silent)
        let h2 = try makeGraph([q2, CountingSourceNode("l2", value: 0.5), SumNode("s"), TestOutputNode()],
                               "q2 -> s:0; l2 -> s:1; s -> out")
        try h2.initialize()
        try h2.start()
        let r2 = try XCTUnwrap(h2.render(frameCount: 64))
        XCTAssertFalse(r2.isSilent)
        XCTAssertEqual(r2.buffer.channel(0)[63], 0.5)
    }

    func testUninitializeReleasesKernels() throws {
        let a = CountingSourceNode("a")
        let g = try makeGraph([a, TestOutputNode()], "a -> out")
        try g.initialize()
        weak let kernel = a.kernel
        XCTAssertNotNil(kernel)
        g.uninitialize()
        XCTAssertNil(kernel, "no plan or node keeps the kernel alive")
    }
}
