// Tests of live taps: exact buffer sizes, bit-exact offline delivery, install/remove while rendering, drops.
import AudioGraphNodes
import AudioGraphRealtime
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphCore

#if canImport(Glibc)
import Glibc
#endif

/// What a tap's block received, in order (filled on the delivery thread, read by the test).
final class TapRecording: Sendable {
    struct Buffer {
        var frames: [[Float]]
        var frameCount: Int
        var sampleTime: Int64
        var hostTime: UInt64
        var thread: pthread_t
    }

    private let buffers = Mutex<[Buffer]>([])
    /// Microseconds the block sleeps after recording (a slow block).
    let sleepMicroseconds: UInt32

    init(sleepMicroseconds: UInt32 = 0) { self.sleepMicroseconds = sleepMicroseconds }

    var block: LiveTap.Block {
        { [self] buffer, frameCount, sampleTime, hostTime in
            let frames = (0..<buffer.channelCount).map { Array(UnsafeBufferPointer(start: buffer.channel($0), count: frameCount)) }
            buffers.withLock {
                $0.append(Buffer(frames: frames, frameCount: frameCount, sampleTime: sampleTime, hostTime: hostTime,
                                 thread: pthread_self()))
            }
            if sleepMicroseconds > 0 { usleep(sleepMicroseconds) }
        }
    }

    var received: [Buffer] { buffers.withLock { $0 } }

    /// Channel `c` of every buffer, concatenated.
    func concatenated(channel c: Int) -> [Float] { received.flatMap { $0.frames[c] } }
}

/// A thread rendering `graph` in `sliceFrames` slices, sleeping `pauseMicroseconds` after each,
/// until stopped; records its own pthread and how many frames it rendered.
final class TapTestRenderThread: @unchecked Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let renderedFrames = Atomic<Int>(0)
    private let maxRenderNanos = Atomic<Int>(0)
    private var thread: PosixThread?
    private let threadIDStore = Atomic<UInt>(0)
    let graph: AudioGraph
    let sliceFrames: Int
    let pauseMicroseconds: UInt32
    let slices: Int

    init(graph: AudioGraph, sliceFrames: Int, pauseMicroseconds: UInt32, slices: Int = .max) {
        self.graph = graph
        self.sliceFrames = sliceFrames
        self.pauseMicroseconds = pauseMicroseconds
        self.slices = slices
        thread = try! PosixThread(name: "ag-test-render") { [self] in run() }
    }

    /// The render thread's `pthread_self()` (0 until it runs).
    var threadID: UInt { threadIDStore.load(ordering: .acquiring) }

    /// Waits for the render loop to end (after `slices` slices).
    func join() { thread?.join() }

    private func run() {
        threadIDStore.store(UInt(pthread_self()), ordering: .releasing)
        var done = 0
        while done < slices && !stopFlag.load(ordering: .relaxed) {
            let t0 = LiveTap.hostTimeNow()
            _ = graph.render(frameCount: sliceFrames)
            let dt = Int(LiveTap.hostTimeNow() - t0)
            if dt > maxRenderNanos.load(ordering: .relaxed) { maxRenderNanos.store(dt, ordering: .relaxed) }
            renderedFrames.wrappingAdd(sliceFrames, ordering: .releasing)
            done += 1
            if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
        }
    }

    var frames: Int { renderedFrames.load(ordering: .acquiring) }
    /// The longest single render call, in seconds.
    var longestRender: Double { Double(maxRenderNanos.load(ordering: .relaxed)) / 1e9 }

    /// Stops the loop and joins the thread.
    func stopAndJoin() {
        stopFlag.store(true, ordering: .relaxed)
        thread?.join()
    }
}

final class LiveTapTests: XCTestCase {
    /// Waits until `condition` holds (polling every ms), at most `timeout` seconds.
    private func eventually(_ timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            usleep(1000)
        }
        return true
    }

    /// Every buffer but the last holds `size` frames; sample times follow each other from `first`.
    private func assertConsecutive(_ buffers: [TapRecording.Buffer], size: Int, from first: Int64? = nil,
                                   file: StaticString = #filePath, line: UInt = #line) {
        guard let head = buffers.first else { return XCTFail("no buffer delivered", file: file, line: line) }
        if let first { XCTAssertEqual(head.sampleTime, first, "first sample time", file: file, line: line) }
        for (i, b) in buffers.enumerated() {
            if i < buffers.count - 1 {
                XCTAssertEqual(b.frameCount, size, "buffer \(i) of \(buffers.count)", file: file, line: line)
                XCTAssertEqual(buffers[i + 1].sampleTime, b.sampleTime + Int64(b.frameCount), "gap after buffer \(i)",
                               file: file, line: line)
            } else {
                XCTAssertTrue(b.frameCount >= 1 && b.frameCount <= size, "final buffer of \(b.frameCount) frames",
                              file: file, line: line)
            }
        }
    }

    // MARK: Manual (offline) delivery

    /// An oscillator and a sawtooth into a mixer, rendered offline in slices of 64 and 512 frames
    /// (and a ragged last slice): manual taps on the mixer and on the sine deliver buffers of
    /// exactly 100, 512 and 4096 frames, with consecutive sample times from 0, whose concatenation
    /// equals what the graph rendered bit for bit (the mixer) and the sine formula (the oscillator).
    func testManualTapsDeliverExactBuffersEqualToTheRenderBitForBit() throws {
        for slice in [64, 512] {
            for size in [100, 512, 4096] {
                let graph = AudioGraph(sampleRate: 48000, maximumFramesPerSlice: slice)
                let sine = OscillatorNode(id: "sine", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine))
                try sine.setParameter("frequency", 441)
                let saw = OscillatorNode(id: "saw", sampleRate: 48000, properties: OscillatorProperties(waveform: .sawtooth, channels: 2))
                let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 2)
                for n in [sine, saw, mixer, GenericOutputNode(id: "out")] as [GraphNode] { try graph.addNode(n) }
                try graph.connect("sine", to: "mix", inputBus: 0)
                try graph.connect("saw", to: "mix", inputBus: 1)
                try graph.connect("mix", to: "out")
                try graph.initialize()
                try graph.start()
                let mixRecording = TapRecording(), sineRecording = TapRecording()
                let mixTap = LiveTap(bus: 0, channelCount: 2, sampleRate: 48000, bufferSize: size,
                                     maximumFramesPerSlice: slice, delivery: .manual, block: mixRecording.block)
                let sineTap = LiveTap(bus: 0, channelCount: 1, sampleRate: 48000, bufferSize: size,
                                      maximumFramesPerSlice: slice, delivery: .manual, block: sineRecording.block)
                try graph.installTap(mixTap, onNode: "mix")
                try graph.installTap(sineTap, onNode: "sine")

                let total = 20_000 + 37
                var rendered: [[Float]] = [[], []]
                var done = 0
                while done < total {
                    let n = min(slice, total - done)
                    let r = try XCTUnwrap(graph.render(frameCount: n))
                    for c in 0..<2 { rendered[c] += UnsafeBufferPointer(start: r.buffer.channel(c), count: n) }
                    graph.deliverPendingTaps()
                    done += n
                }
                XCTAssertTrue(graph.removeTap(onNode: "mix", bus: 0) === mixTap)
                XCTAssertTrue(graph.removeTap(onNode: "sine", bus: 0) === sineTap)
                XCTAssertFalse(mixTap.isFinished, "finished before the render thread let go")
                _ = graph.render(frameCount: slice) // adopts the removal: these frames are not tapped
                graph.deliverPendingTaps()
                XCTAssertTrue(mixTap.isFinished && sineTap.isFinished)

                let context = "slice \(slice), buffer \(size)"
                let buffers = mixRecording.received
                assertConsecutive(buffers, size: size, from: 0)
                XCTAssertEqual(buffers.count, (total + size - 1) / size, context)
                XCTAssertEqual(mixTap.deliveredBufferCount, buffers.count, context)
                XCTAssertEqual(mixTap.deliveredFrameCount, total, context)
                XCTAssertEqual(mixTap.droppedBufferCount, 0, context)
                XCTAssertEqual(mixTap.droppedFrameCount, 0, context)
                for c in 0..<2 {
                    let tapped = mixRecording.concatenated(channel: c)
                    XCTAssertEqual(tapped.count, total, context)
                    XCTAssertTrue(tapped.elementsEqual(rendered[c]) { $0.bitPattern == $1.bitPattern },
                                  "\(context): the mixer tap differs from the render (channel \(c))")
                }
                assertConsecutive(sineRecording.received, size: size, from: 0)
                let tone = sineRecording.concatenated(channel: 0)
                XCTAssertEqual(tone.count, total, context)
                var worst: Double = 0
                for (i, x) in tone.enumerated() {
                    worst = max(worst, abs(Double(x) - sin(2 * Double.pi * 441 * Double(i) / 48000)))
                }
                XCTAssertLessThan(worst, 1e-4, "\(context): the oscillator tap is not the sine it should be")
                graph.stop()
                graph.uninitialize()
            }
        }
    }

    /// A source at 44.1 kHz (or 192 kHz) behind a 48 kHz mixer renders on its own timeline,
    /// several times or not at all per slice: its tap counts the source's own frames (consecutive
    /// from 0, each frame's value its own index) and, drained after each render call with the
    /// capacity `installTap(onNode:bus:bufferSize:...)` picks for the rate, loses none.
    func testTapBehindARateConverterCarriesTheSourcesOwnTimeline() throws {
        for (rate, slice) in [(44100.0, 256), (192000.0, 512)] {
            let source = CountingSourceNode("src", mode: .localTime, sampleRate: rate)
            let graph = try makeGraph([source, MixerNode(id: "mix", sampleRate: 48000), GenericOutputNode(id: "out")],
                                      "src -> mix -> out", maximumFramesPerSlice: slice)
            try graph.initialize()
            try graph.start()
            let recording = TapRecording()
            let tap = try graph.installTap(onNode: "src", bus: 0, bufferSize: 300, delivery: .manual, block: recording.block)
            XCTAssertEqual(tap.sampleRate, rate)
            for _ in 0..<400 {
                _ = graph.render(frameCount: slice)
                graph.deliverPendingTaps()
            }
            graph.removeTap(onNode: "src", bus: 0)
            graph.stop() // adopts the removal on this thread
            graph.deliverPendingTaps()
            XCTAssertTrue(tap.isFinished)
            assertConsecutive(recording.received, size: 300, from: 0)
            let values = recording.concatenated(channel: 0)
            XCTAssertEqual(values.count, tap.deliveredFrameCount)
            XCTAssertGreaterThan(Int64(values.count), source.probe.lastSampleTime.load(ordering: .acquiring),
                                 "the tap did not see the source's last render")
            for (i, v) in values.enumerated() where v != Float(i) {
                XCTFail("\(rate) Hz: frame \(i) holds \(v): a frame was lost or repeated")
                break
            }
            // The source runs ahead of the graph by the converter's latency, at rate/48 kHz.
            let expected = 400.0 * Double(slice) * rate / 48000
            XCTAssertEqual(Double(values.count), expected, accuracy: 8192, "frames of the source's timeline at \(rate) Hz")
            XCTAssertEqual(tap.droppedFrameCount, 0, "\(rate) Hz")
        }
    }

    /// A manual tap that nobody drains loses whole buffers once its ring is full, counted, and
    /// then delivers only whole buffers again.
    func testUndrainedManualTapDropsWholeBuffersAndCountsThem() throws {
        let source = CountingSourceNode("src", mode: .localTime)
        let graph = try makeGraph([source, TestOutputNode()], "src -> out", maximumFramesPerSlice: 64)
        try graph.initialize()
        try graph.start()
        let recording = TapRecording()
        let tap = LiveTap(bus: 0, channelCount: 1, sampleRate: 48000, bufferSize: 100, maximumFramesPerSlice: 64,
                          minimumCapacity: 400, delivery: .manual, block: recording.block)
        XCTAssertEqual(tap.bufferCount, 4)
        try graph.installTap(tap, onNode: "src")
        for _ in 0..<25 { _ = graph.render(frameCount: 64) } // 1600 frames: 4 buffers kept, 12 dropped
        XCTAssertEqual(tap.droppedBufferCount, 12)
        XCTAssertEqual(tap.droppedFrameCount, 1200)
        graph.deliverPendingTaps()
        for _ in 0..<5 { _ = graph.render(frameCount: 64) } // 320 more: 3 whole buffers and 20 frames
        graph.deliverPendingTaps()
        graph.removeTap(onNode: "src", bus: 0)
        graph.stop()
        graph.deliverPendingTaps()
        let starts = recording.received.map(\.sampleTime)
        XCTAssertEqual(starts, [0, 100, 200, 300, 1600, 1700, 1800, 1900])
        XCTAssertEqual(recording.received.map(\.frameCount), [100, 100, 100, 100, 100, 100, 100, 20])
        for b in recording.received {
            XCTAssertEqual(b.frames[0], (0..<b.frameCount).map { Float(b.sampleTime + Int64($0)) })
        }
        XCTAssertEqual(tap.deliveredFrameCount + tap.droppedFrameCount, 1920)
    }

    // MARK: Live delivery

    /// A real render thread renders while the test thread installs a tap (delivered by its own
    /// thread), waits, and removes it: every frame between the installation's slice boundary and
    /// the removal's arrives, in buffers of exactly 1000 frames but the last, on a thread that is
    /// neither the render thread nor the test thread; nothing is dropped.
    func testInstallAndRemoveWhileRenderingLosesNothing() throws {
        let source = CountingSourceNode("src", mode: .localTime)
        let graph = try makeGraph([source, GainNode("g"), TestOutputNode()], "src -> g -> out", maximumFramesPerSlice: 256)
        try graph.initialize()
        try graph.start()
        let render = TapTestRenderThread(graph: graph, sliceFrames: 256, pauseMicroseconds: 500)
        XCTAssertTrue(eventually { render.frames > 256 * 20 })
        let recording = TapRecording()
        let tap = LiveTap(bus: 0, channelCount: 1, sampleRate: 48000, bufferSize: 1000, maximumFramesPerSlice: 256,
                          block: recording.block)
        try graph.installTap(tap, onNode: "g")
        XCTAssertTrue(eventually { tap.deliveredBufferCount >= 60 }, "the delivery thread delivered \(tap.deliveredBufferCount)")
        XCTAssertTrue(graph.removeTap(onNode: "g", bus: 0) === tap)
        XCTAssertNil(graph.installedTap(onNode: "g", bus: 0))
        XCTAssertTrue(tap.waitUntilFinished(timeout: 5), "the tap did not finish")
        render.stopAndJoin()
        graph.stop()

        let buffers = recording.received
        assertConsecutive(buffers, size: 1000)
        let first = buffers[0].sampleTime
        XCTAssertEqual(first % 256, 0, "the tap started in the middle of a slice")
        XCTAssertEqual((first + Int64(tap.deliveredFrameCount)) % 256, 0, "the tap ended in the middle of a slice")
        for b in buffers where b.frames[0] != (0..<b.frameCount).map({ Float(b.sampleTime + Int64($0)) }) {
            return XCTFail("buffer at \(b.sampleTime) does not hold its frames")
        }
        XCTAssertEqual(tap.droppedBufferCount, 0)
        XCTAssertEqual(tap.droppedFrameCount, 0)
        let threads = Set(buffers.map { UInt($0.thread) })
        XCTAssertEqual(threads.count, 1, "one delivery thread")
        XCTAssertNotEqual(threads.first, render.threadID, "the block ran on the render thread")
        XCTAssertNotEqual(threads.first, UInt(pthread_self()), "the block ran on the test thread")
        let now = LiveTap.hostTimeNow()
        XCTAssertTrue(buffers.allSatisfy { $0.hostTime > 0 && $0.hostTime <= now })
        XCTAssertTrue(zip(buffers, buffers.dropFirst()).allSatisfy { $0.hostTime <= $1.hostTime }, "host times go back")
    }

    /// A block that sleeps 40 ms per 512-frame buffer while the render thread renders about five
    /// times faster than real time: whole buffers are lost and counted (every frame is either
    /// delivered in a whole, correct buffer or counted as dropped), and the render thread keeps its
    /// pace (it never waits for the block).
    func testSlowBlockLosesWholeBuffersWhileTheRenderThreadKeepsItsPace() throws {
        let source = CountingSourceNode("src", mode: .localTime)
        let graph = try makeGraph([source, TestOutputNode()], "src -> out", maximumFramesPerSlice: 256)
        try graph.initialize()
        try graph.start()
        let recording = TapRecording(sleepMicroseconds: 40_000)
        let tap = LiveTap(bus: 0, channelCount: 1, sampleRate: 48000, bufferSize: 512, maximumFramesPerSlice: 256,
                          minimumCapacity: 4 * 512, block: recording.block)
        try graph.installTap(tap, onNode: "src")
        let slices = 1000
        let started = Date()
        let render = TapTestRenderThread(graph: graph, sliceFrames: 256, pauseMicroseconds: 1000, slices: slices)
        render.join()
        let elapsed = Date().timeIntervalSince(started)
        graph.removeTap(onNode: "src", bus: 0)
        graph.stop() // adopts the removal here (no render thread any more)
        XCTAssertTrue(tap.waitUntilFinished(timeout: 10), "the tap did not finish")
        print("slow tap block: \(slices) slices in \(String(format: "%.2f", elapsed)) s (longest render "
              + "\(String(format: "%.2f", render.longestRender * 1000)) ms); \(tap.deliveredBufferCount) buffers delivered, "
              + "\(tap.droppedBufferCount) dropped (\(tap.droppedFrameCount) frames)")

        XCTAssertGreaterThan(tap.droppedBufferCount, 100, "a block 20 times too slow must lose buffers")
        XCTAssertGreaterThan(tap.deliveredBufferCount, 4)
        XCTAssertEqual(tap.droppedFrameCount, tap.droppedBufferCount * 512, "only whole buffers are dropped")
        XCTAssertEqual(tap.deliveredFrameCount + tap.droppedFrameCount, slices * 256, "frames neither delivered nor counted")
        for b in recording.received {
            XCTAssertEqual(b.frameCount, 512)
            XCTAssertEqual(b.sampleTime % 512, 0)
            XCTAssertEqual(b.frames[0], (0..<512).map { Float(b.sampleTime + Int64($0)) }, "buffer at \(b.sampleTime)")
        }
        // 1000 slices paced at 1 ms: about 1.1 s of sleeping and rendering (a few seconds on a
        // loaded machine). A render thread waiting for the block (40 ms per buffer, 500 buffers)
        // would take 20 s.
        XCTAssertLessThan(elapsed, 10, "the render thread lost its pace")
    }

    // MARK: Installation rules

    /// One tap per bus, an existing node and bus, the bus's format, each tap installed once;
    /// removing a tap that is not there returns nil.
    func testInstallationIsCheckedAndATapIsInstalledOnce() throws {
        let graph = try makeGraph([CountingSourceNode("src", channels: 2), TestOutputNode()], "src -> out")
        func tap(bus: Int = 0, channels: Int = 2, rate: Double = 48000) -> LiveTap {
            LiveTap(bus: bus, channelCount: channels, sampleRate: rate, bufferSize: 0, maximumFramesPerSlice: 64,
                    delivery: .manual) { _, _, _, _ in }
        }
        XCTAssertEqual(tap().bufferSize, 64, "bufferSize 0 is the graph's slice")
        XCTAssertThrowsError(try graph.installTap(onNode: "src", bus: 0, bufferSize: 10, delivery: .manual) { _, _, _, _ in }) {
            XCTAssertEqual(($0 as? AudioGraphError)?.description,
                           "the format of output bus 0 of \"src\" is not known before initialize(); pass one")
        }
        XCTAssertThrowsError(try graph.installTap(tap(), onNode: "nope")) { XCTAssertEqual($0 as? AudioGraphError, .nodeNotFound("nope")) }
        XCTAssertThrowsError(try graph.installTap(tap(bus: 1), onNode: "src")) {
            XCTAssertEqual($0 as? AudioGraphError, .busOutOfRange(node: "src", scope: .output, bus: 1, count: 1))
        }
        try graph.initialize()
        XCTAssertThrowsError(try graph.installTap(tap(channels: 1), onNode: "src")) {
            XCTAssertEqual(($0 as? AudioGraphError)?.description, "node \"src\": a tap of 1 channels on output bus 0, which carries 2")
        }
        XCTAssertThrowsError(try graph.installTap(tap(rate: 44100), onNode: "src"))
        let first = try graph.installTap(onNode: "src", bus: 0, bufferSize: 0, delivery: .manual) { _, _, _, _ in }
        XCTAssertEqual(first.channelCount, 2, "the bus's format")
        XCTAssertEqual(first.bufferSize, 64)
        // A second tap on the bus is allowed (several receivers per bus); removal by bus takes
        // the first one installed, removal by tap the given one.
        let second = tap()
        try graph.installTap(second, onNode: "src")
        XCTAssertTrue(graph.installedTap(onNode: "src", bus: 0) === first)
        XCTAssertTrue(graph.removeTap(onNode: "src", bus: 0) === first)
        XCTAssertTrue(graph.installedTap(onNode: "src", bus: 0) === second)
        XCTAssertNil(graph.removeTap(first, fromNode: "src"))
        XCTAssertTrue(graph.removeTap(second, fromNode: "src") === second)
        XCTAssertNil(graph.removeTap(onNode: "src", bus: 0))
        XCTAssertTrue(first.isDetached, "not running: the removal applies at once")
        XCTAssertThrowsError(try graph.installTap(first, onNode: "src"))
    }

    /// A tap installed on an open graph starts with the first render after `initialize()`; a tap
    /// whose node a change list removes finishes with that list.
    func testTapInstalledBeforeInitializeAndTapOfARemovedNode() throws {
        let source = CountingSourceNode("src", mode: .localTime)
        let other = CountingSourceNode("other", value: 3)
        let graph = try makeGraph([source, other, SumNode("sum"), TestOutputNode()], "src -> sum:0; other -> sum:1; sum -> out")
        let recording = TapRecording(), otherRecording = TapRecording()
        let tap = LiveTap(bus: 0, channelCount: 1, sampleRate: 48000, bufferSize: 50, maximumFramesPerSlice: 64,
                          delivery: .manual, block: recording.block)
        let otherTap = LiveTap(bus: 0, channelCount: 1, sampleRate: 48000, bufferSize: 50, maximumFramesPerSlice: 64,
                               delivery: .manual, block: otherRecording.block)
        try graph.installTap(tap, onNode: "src")
        try graph.installTap(otherTap, onNode: "other")
        try graph.initialize()
        try graph.start()
        for _ in 0..<4 { _ = graph.render(frameCount: 64); graph.deliverPendingTaps() }
        try graph.removeNode("other")
        try graph.update(waitUntilApplied: false)
        XCTAssertNil(graph.installedTap(onNode: "other", bus: 0))
        for _ in 0..<2 { _ = graph.render(frameCount: 64); graph.deliverPendingTaps() }
        XCTAssertTrue(otherTap.isFinished, "the removed node's tap did not finish")
        XCTAssertEqual(otherRecording.concatenated(channel: 0), [Float](repeating: 3, count: 256))
        XCTAssertEqual(recording.concatenated(channel: 0), (0..<350).map(Float.init))
        XCTAssertFalse(tap.isFinished)
    }
}
