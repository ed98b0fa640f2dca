// The live path keeps the real-time rules: the PulseAudio render thread allocates and locks nothing.
import AudioGraphRealtime
@testable import AudioGraphPulse
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

/// State the render-thread hook shares with the test (atomics only).
private final class Tracking: Sendable {
    let slices = Atomic<Int>(0)
    let tracking = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    let stopped = Atomic<Bool>(false)
    let warmUpSlices = 50
}

final class OutputNodeTests: PulseServerTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        try super.setUpWithError()
    }

    /// 3 s of live playback of a mixer graph at 20 ms latency while this thread sets parameters
    /// and applies connect/disconnect change lists: the render thread (rendering 32-frame quanta of
    /// the graph's 256-frame slices; tracked from its 50th quantum until just before it stops)
    /// makes no allocation, no free and takes no mutex.
    func testLiveRenderThreadAllocatesNothingAndTakesNoLock() throws {
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let a = OscillatorNode(id: "a", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine))
        let b = OscillatorNode(id: "b", sampleRate: 48000, properties: OscillatorProperties(waveform: .triangle, channels: 2))
        let mix = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 2)
        let out = OutputNode(id: "out", properties: OutputProperties(latency: 20))
        for n in [a, b, mix, out] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("a", to: "mix", inputBus: 0)
        try graph.connect("b", to: "mix", inputBus: 1)
        try graph.connect("mix", to: "out")
        try graph.initialize()

        let t = Tracking()
        out.testOnly_renderThreadHook = {
            let n = t.slices.add(1, ordering: .relaxed).newValue
            if t.stopRequested.load(ordering: .acquiring) {
                if t.tracking.load(ordering: .relaxed) {
                    RealTimeScaffold.trackCurrentThread(false)
                    t.tracking.store(false, ordering: .relaxed)
                }
                t.stopped.store(true, ordering: .releasing)
            } else if n == t.warmUpSlices {
                RealTimeScaffold.reset(controlLocks: false)
                RealTimeScaffold.trackCurrentThread(true)
                t.tracking.store(true, ordering: .relaxed)
            }
        }
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        // The driver marks its render thread: count ControlLocks taken on it instead of trapping.
        let savedTrapping = RenderThreadMark.trapsOnViolation
        RenderThreadMark.trapsOnViolation = false
        defer { RenderThreadMark.trapsOnViolation = savedTrapping }
        RenderThreadMark.resetLockViolations()
        try out.start(graph: graph, context: context)

        let clock = ContinuousClock()
        let until = clock.now + .seconds(3)
        var step = 0, lists = 0
        var connected = true
        while clock.now < until {
            step += 1
            try a.setParameter("frequency", 300 + Double(step % 500), rampFrames: 240)
            try mix.setParameter("input.1.pan", Double(step % 21) / 10 - 1)
            if step % 10 == 0 {
                graph.enqueue(connected ? .disconnect(destination: "mix", destinationBus: 0)
                                        : .connect(source: "a", sourceBus: 0, destination: "mix", destinationBus: 0))
                connected.toggle()
                try graph.update(waitUntilApplied: true)
                lists += 1
            }
            usleep(1000)
        }
        t.stopRequested.store(true, ordering: .releasing)
        let deadline = clock.now + .seconds(2)
        while !t.stopped.load(ordering: .acquiring) && clock.now < deadline { usleep(1000) }
        let allocations = RealTimeScaffold.current().allocations, frees = RealTimeScaffold.current().frees, locks = RealTimeScaffold.current().locks
        let controlLocks = RenderThreadMark.lockViolations
        let underruns = out.underrunCount
        let renderedBeforeStop = out.renderedFrames
        out.stop()
        // The counters keep the last run's values after stop() (they used to read 0).
        XCTAssertGreaterThanOrEqual(out.renderedFrames, renderedBeforeStop)
        XCTAssertGreaterThan(out.renderedFrames, 48000, "3 s were rendered")
        XCTAssertGreaterThanOrEqual(out.underrunCount, underruns)
        let slices = t.slices.load(ordering: .relaxed)
        print("live real-time safety: \(slices) slices, \(lists) change lists, \(underruns) underruns; "
              + "render thread: \(allocations) allocations, \(frees) frees, \(locks) mutex locks, \(controlLocks) control locks")
        XCTAssertTrue(t.stopped.load(ordering: .acquiring), "the render thread stopped calling back")
        XCTAssertEqual(out.streamConfiguration(graph: graph).playbackQuantumFrames, 32)
        XCTAssertGreaterThan(slices, 2500, "3 s in 32-frame quanta is 4500 render calls")
        XCTAssertGreaterThan(lists, 20)
        XCTAssertEqual(allocations, 0, "the live render thread allocated")
        XCTAssertEqual(frees, 0, "the live render thread freed memory")
        XCTAssertEqual(locks, 0, "the live render thread took a mutex")
        XCTAssertEqual(controlLocks, 0, "the live render thread took a ControlLock")
    }

    /// Playing to an end frame that falls inside a quantum (`play --duration`): the quantum that
    /// crosses it is silenced past the end and nothing after it is rendered — without an
    /// allocation or a lock on the render thread (tracked from the 50th slice on, through the end).
    func testEndFrameIsExactAndRealTimeSafe() throws {
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: 256)
        let a = OscillatorNode(id: "a", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine))
        let out = OutputNode(id: "out", properties: OutputProperties(latency: 20))
        for n in [a, out] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("a", to: "out")
        try graph.initialize()
        let t = Tracking()
        out.testOnly_renderThreadHook = {
            if t.slices.add(1, ordering: .relaxed).newValue == t.warmUpSlices {
                RealTimeScaffold.reset(controlLocks: false)
                RealTimeScaffold.trackCurrentThread(true)
            }
        }
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let end: Int64 = 72_100  // 2253 quanta of 32 frames (20 ms) and 4 frames
        XCTAssertEqual(out.streamConfiguration(graph: graph).playbackQuantumFrames, 32)
        try out.start(graph: graph, context: context, endFrame: end)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while !(out.playbackStream?.hasRenderedToEnd ?? true) && clock.now < deadline { usleep(2000) }
        usleep(200_000)  // the render thread idles past the end, still tracked
        let allocations = RealTimeScaffold.current().allocations, frees = RealTimeScaffold.current().frees, locks = RealTimeScaffold.current().locks
        let rendered = out.renderedFrames, slices = t.slices.load(ordering: .relaxed)
        let drained = out.playbackStream?.drain(timeout: 3) ?? false
        out.stop()
        print("end frame: \(rendered) frames in \(slices) slices, drained \(drained); \(allocations) allocations, \(frees) frees, \(locks) locks")
        XCTAssertEqual(rendered, Int(end))
        XCTAssertEqual(slices, 2254, "no quantum after the one that crosses the end")
        XCTAssertTrue(drained)
        XCTAssertEqual(allocations, 0)
        XCTAssertEqual(frees, 0)
        XCTAssertEqual(locks, 0)
    }

    /// A graph of oscillator → output, initialized, with `threads` render threads and `slice` frames.
    private func liveGraph(threads: Int, slice: Int) throws -> (AudioGraph, OutputNode) {
        let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: slice)
        let a = OscillatorNode(id: "a", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine))
        let out = OutputNode(id: "out", properties: OutputProperties(latency: 20))
        for n in [a, out] as [GraphNode] { try graph.addNode(n) }
        try graph.connect("a", to: "out")
        try graph.setRenderThreadCount(threads)
        try graph.initialize()
        return (graph, out)
    }

    /// Review item 5: a graph rendering on 2 threads is refused live (the real-time thread would
    /// wait on workers); nothing is left running. Before the fix it started.
    func testParallelGraphIsRefusedLive() throws {
        let (graph, out) = try liveGraph(threads: 2, slice: 256)
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        XCTAssertThrowsError(try out.start(graph: graph, context: context)) {
            XCTAssertEqual($0 as? PulseError, .parallelRenderingNotLive(threads: 2))
        }
        XCTAssertNil(out.playbackStream)
        XCTAssertFalse(graph.isRunning)
        out.stop()
    }

    /// Review item 4: a prime slice size (1021) would make the live quantum 1 frame; it is refused
    /// with a one-line error. 441 (quantum 21) still plays. Before the fix 1021 started.
    func testSliceSizeWithoutUsableDivisorIsRefusedLive() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let (graph, out) = try liveGraph(threads: 1, slice: 1021)
        XCTAssertThrowsError(try out.start(graph: graph, context: context)) {
            XCTAssertEqual($0 as? PulseError, .sliceSizeUnsuitableForLive(maximumFramesPerSlice: 1021, quantum: 1))
            XCTAssertFalse("\($0)".contains("\n"))
        }
        XCTAssertNil(out.playbackStream)
        XCTAssertFalse(graph.isRunning)
        let (graph2, out2) = try liveGraph(threads: 1, slice: 441)
        XCTAssertEqual(out2.streamConfiguration(graph: graph2).playbackQuantumFrames, 21)
        try out2.start(graph: graph2, context: context)
        out2.stop()
    }
}
