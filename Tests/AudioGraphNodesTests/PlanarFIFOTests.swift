// PlanarFIFO: the WSOLA stretcher's and pitch shifter's output queue, against a plain array per channel.
@testable import AudioGraphNodes
import AudioGraphTesting
import XCTest

final class PlanarFIFOTests: XCTestCase {
    /// Two thousand seeded writes and reads of random sizes through a FIFO barely larger than
    /// one write plus one read (so most writes move the waiting frames back first): every frame
    /// read, planar and interleaved, is the one an array queue per channel gives, in order, and
    /// the level is the array's count.
    func testFramesComeOutInOrderThroughTheMovesBack() {
        let channels = 3, maxWrite = 37, maxRead = 29
        let fifo = PlanarFIFO(channelCount: channels, capacity: maxWrite + maxRead)
        var reference = [[Float]](repeating: [], count: channels)
        var random = SeededRandom(seed: 23)
        var next: Float = 1
        let out = ChannelBufferStorage(channelCount: channels, capacity: maxRead + 5)
        let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: maxRead * channels)
        defer { interleaved.deallocate() }
        var moves = 0
        var front = 0   // where the model says the first waiting frame is
        for step in 0..<2000 {
            if fifo.level + maxWrite <= fifo.capacity, Int.random(in: 0..<2, using: &random) == 0 {
                let n = 1 + Int.random(in: 0..<maxWrite, using: &random)
                if front + fifo.level + n > fifo.capacity { front = 0; moves += 1 }
                let w = fifo.reserve(n)
                XCTAssertEqual(w, front + fifo.level, "written right after the last frame, moved back only when needed")
                XCTAssertLessThanOrEqual(w + n, fifo.capacity)
                for c in 0..<channels {
                    for i in 0..<n {
                        fifo.channel(c)[w + i] = next + Float(c) * 0.25
                        reference[c].append(next + Float(c) * 0.25)
                        next += 1
                    }
                }
                fifo.didAppend(n)
            } else if fifo.level > 0 {
                let n = 1 + Int.random(in: 0..<min(maxRead, fifo.level), using: &random)
                if step % 2 == 0 {
                    fifo.read(into: out.list, at: 5, frameCount: n)
                    for c in 0..<channels {
                        XCTAssertEqual(Array(UnsafeBufferPointer(start: out.list.channel(c) + 5, count: n)), Array(reference[c].prefix(n)))
                    }
                } else {
                    fifo.read(interleavedInto: interleaved, frameCount: n)
                    for c in 0..<channels {
                        XCTAssertEqual((0..<n).map { interleaved[$0 * channels + c] }, Array(reference[c].prefix(n)))
                    }
                }
                for c in 0..<channels { reference[c].removeFirst(n) }
                front = reference[0].isEmpty ? 0 : front + n
            }
            XCTAssertEqual(fifo.level, reference[0].count)
        }
        XCTAssertGreaterThan(moves, 50, "writes moved the waiting frames back")
        fifo.removeAll()
        XCTAssertEqual(fifo.level, 0)
        XCTAssertEqual(fifo.reserve(maxWrite), 0)
    }
}
