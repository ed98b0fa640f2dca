// Tests of BufferSourceNode (Web Audio's AudioBufferSourceNode) against numpy's playhead (scripts/reference/buffer_source_reference.py).
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

final class BufferSourceNodeTests: XCTestCase {
    let sr = 48000.0

    /// A 4800-frame mono buffer: a 300 Hz sine plus a slow ramp (so loops and directions show).
    private func buffer() -> [Float] {
        (0..<4800).map { Float(0.5 * sin(2 * Double.pi * 300 * Double($0) / 48000) + Double($0) / 48000) }
    }

    private func numpy(_ x: [Float], rate: Double, loop: Bool, loopStart: Double, loopEnd: Double, offset: Double, frames: Int) throws -> [Double] {
        try ReferenceScript.bufferSource(x, rate: rate, loop: loop, loopStart: loopStart, loopEnd: loopEnd, offset: offset,
                                         frames: frames, in: TestFiles.makeTemporaryDirectory(self))
    }

    /// Rates (1.5; detune +700 cents on rate 1; a negative rate from the end; rate 0.37 looping
    /// 0.01...0.03 s from an offset; detune 1200 = rate 2), loops and offsets: within 1e-6 of
    /// numpy's playhead, the same for any slicing.
    func testPlayheadMatchesNumpy() throws {
        let x = buffer()
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let file = dir.appendingPathComponent("b.wav").path
        try TestFiles.writeSoundFile(file, [x], sampleRate: sr)
        let cases: [(rate: Double, detune: Double, loop: Bool, loopStart: Double, loopEnd: Double, offset: Double)] = [
            (1.5, 0, false, 0, 0, 0),
            (1, 700, false, 0, 0, 0.01),
            (-0.8, 0, false, 0, 0, 0.0999),
            (0.37, 0, true, 0.01, 0.03, 0.02),
            (1, 1200, true, 0, 0, 0),
        ]
        for c in cases {
            func render(_ pattern: [Int]) throws -> [Float] {
                let node = try BufferSourceNode(id: "b", options: .init(file: "b.wav", path: file, loop: c.loop, loopStart: c.loopStart,
                                                                         loopEnd: c.loopEnd, offset: c.offset))
                try node.setParameter("playbackRate", c.rate)
                try node.setParameter("detune", c.detune)
                let g = try startedGraph([node], "b -> out", slice: 256)
                return renderFrames(g, frames: 9600, channels: 1, slices: pattern)[0]
            }
            let y = try render([256])
            let rate = c.rate * pow(2, c.detune / 1200)
            let ref = try numpy(x, rate: rate, loop: c.loop, loopStart: c.loopStart * sr, loopEnd: c.loopEnd * sr, offset: c.offset * sr, frames: 9600)
            let e = SignalMeasurement.worstError(y) { ref[$0] }
            XCTAssertLessThan(e.error, 1e-6, "\(c) at \(e.at)")
            print("bufferSource \(c): worst error against numpy \(e.error)")
            XCTAssertTrue(y == (try render([1, 256, 100])), "slicing changed the output")
        }
    }

    func testAnUnreadableFileIsRefused() {
        XCTAssertThrowsError(try BufferSourceNode(id: "b", options: .init(file: "none.wav", path: "/nonexistent/none.wav")))
    }

    /// `duration` (seconds of buffer content) and `stopTime` end playback and raise the
    /// transport's `ended`: at rate 2 a duration of 10 ms plays 240 frames; a stop at 20 ms ends
    /// at frame 960; a restart through the transport plays again from its offset.
    func testDurationStopTimeAndRestart() throws {
        let x = buffer()
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let file = dir.appendingPathComponent("b.wav").path
        try TestFiles.writeSoundFile(file, [x], sampleRate: sr)
        let timed = try BufferSourceNode(id: "b", options: .init(file: "b.wav", path: file, startTime: 0.005, duration: 0.01))
        try timed.setParameter("playbackRate", 2)
        let g = try startedGraph([timed], "b -> out", slice: 128)
        XCTAssertFalse(timed.transport.ended)
        let y = renderFrames(g, frames: 2400, channels: 1, slices: [128, 7])[0]
        let playing = y.indices.filter { y[$0] != 0 }
        XCTAssertEqual(playing.first, 241)        // x[0] = 0: the first audible frame is the second
        XCTAssertEqual(playing.last, 240 + 239)
        XCTAssertEqual(y[240 + 100], x[200])
        XCTAssertTrue(timed.transport.ended)
        let stopped = try BufferSourceNode(id: "b", options: .init(file: "b.wav", path: file, stopTime: 0.02))
        let h = try startedGraph([stopped], "b -> out", slice: 128)
        let z = renderFrames(h, frames: 2400, channels: 1)[0]
        XCTAssertEqual(z.lastIndex { $0 != 0 }, 959)
        stopped.transport.start(when: 0.06, offset: 0.01, duration: .infinity)   // frame 2880 on the kernel's timeline
        let w = renderFrames(h, frames: 2400, channels: 1)[0]
        XCTAssertTrue(w[0..<480].allSatisfy { $0 == 0 })
        XCTAssertEqual(w[480 + 10], x[480 + 10])
    }

    /// An end of the previous playback that the render thread records after a new start (the
    /// race between `start` and `markEnded`) does not mark the new start ended.
    func testALateEndOfThePreviousStartDoesNotEndTheNewOne() {
        let t = BufferSourceTransport()
        t.start(when: 0, offset: 0, duration: .infinity)
        let first = t.generation.load(ordering: .relaxed)
        t.start(when: 0, offset: 0, duration: .infinity)
        t.markEnded(generation: first)
        XCTAssertFalse(t.ended)
        t.markEnded(generation: t.generation.load(ordering: .relaxed))
        XCTAssertTrue(t.ended)
    }

    /// A new kernel on the same transport (the engine API's new buffer) does not replay a start
    /// whose playback ended: silent, still ended. A new start plays again.
    func testANewKernelDoesNotReplayAnEndedStart() throws {
        let x = Array(buffer()[0..<480])
        let t = BufferSourceTransport()
        t.start(when: 0, offset: 0, duration: .infinity)
        let a = try BufferSourceNode(id: "b", channels: [x], sampleRate: sr, transport: t)
        let g = try startedGraph([a], "b -> out", slice: 128)
        let y = renderFrames(g, frames: 1024, channels: 1)[0]
        XCTAssertEqual(y[100], x[100])
        XCTAssertTrue(t.ended)
        let b = try BufferSourceNode(id: "b", channels: [x.map { $0 + 1 }], sampleRate: sr, transport: t)
        let h = try startedGraph([b], "b -> out", slice: 128)
        let z = renderFrames(h, frames: 1024, channels: 1)[0]
        XCTAssertTrue(z.allSatisfy { $0 == 0 }, "replayed after a buffer change")
        XCTAssertTrue(t.ended)
        t.start(when: 0, offset: 0, duration: .infinity)
        XCTAssertFalse(t.ended)
        let w = renderFrames(h, frames: 1024, channels: 1)[0]
        XCTAssertEqual(w[100], x[100] + 1)
    }

    /// A stop before the first start is ignored: the start plays in full.
    func testAStopBeforeTheFirstStartIsIgnored() throws {
        let x = Array(buffer()[0..<480])
        let t = BufferSourceTransport()
        t.stop(when: 0)
        XCTAssertEqual(t.stopSeconds, .infinity)
        t.start(when: 0, offset: 0, duration: .infinity)
        let a = try BufferSourceNode(id: "b", channels: [x], sampleRate: sr, transport: t)
        let y = renderFrames(try startedGraph([a], "b -> out", slice: 128), frames: 512, channels: 1)[0]
        XCTAssertEqual(y[479], x[479])
    }
}
