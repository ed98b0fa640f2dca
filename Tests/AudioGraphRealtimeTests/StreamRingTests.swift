// Tests of StreamRing: wrap-around writes and copies, and a producer and a consumer thread passing two million frames in order.
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphRealtime

final class StreamRingTests: XCTestCase {
    func testCapacityIsAPowerOfTwoAndFreeFramesFollowTheConsumer() {
        let ring = StreamRing(channelCount: 2, minimumCapacity: 1000)
        XCTAssertEqual(ring.capacity, 1024)
        XCTAssertEqual(ring.freeFrames, 1024)
        let frames: [Float] = (0..<600).flatMap { [Float($0), -Float($0)] }
        frames.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frameCount: 600) }
        XCTAssertEqual(ring.writtenIndex, 600)
        XCTAssertEqual(ring.freeFrames, 424)
        XCTAssertEqual(ring.sample(channel: 1, at: 599), -599)
        ring.releaseFrames(upTo: 500)
        XCTAssertEqual(ring.freeFrames, 924)
        // Wraps: frames 600..<1200 land in slots 600..<1024 then 0..<176.
        let more: [Float] = (600..<1200).flatMap { [Float($0), -Float($0)] }
        more.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frameCount: 600) }
        XCTAssertEqual((500..<1200).map { ring.sample(channel: 0, at: $0) }, (500..<1200).map { Float($0) })
        XCTAssertEqual((500..<1200).map { ring.sample(channel: 1, at: $0) }, (500..<1200).map { -Float($0) })
    }

    /// `writeMono` across the wrap: `fill` is called for the run before and after the wrap with
    /// the request's offsets; a short fill zeroes the rest and is not called again; the same
    /// frames as `write(interleaved:)` of one channel.
    func testWriteMonoFillsBothRunsAndZeroesAfterAShortFill() {
        let ring = StreamRing(channelCount: 1, minimumCapacity: 1000)
        let head: [Float] = (0..<900).map { Float($0) }
        head.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frameCount: 900) }
        ring.releaseFrames(upTo: 800)
        var calls: [(frames: Int, offset: Int)] = []
        // Frames 900..<1200: slots 900..<1024 (124), then 0..<176.
        let filled = ring.writeMono(frameCount: 300) { run, frames, offset in
            calls.append((frames, offset))
            for i in 0..<frames { run[i] = Float(900 + offset + i) }
            return frames
        }
        XCTAssertEqual(filled, 300)
        XCTAssertEqual(calls.map(\.frames), [124, 176])
        XCTAssertEqual(calls.map(\.offset), [0, 124])
        XCTAssertEqual(ring.writtenIndex, 1200)
        XCTAssertEqual((800..<1200).map { ring.sample(channel: 0, at: $0) }, (800..<1200).map { Float($0) })

        // A short fill of the first run: the rest of the request is silence, no second call.
        ring.releaseFrames(upTo: 1200)
        calls = []
        let short = ring.writeMono(frameCount: 900) { run, frames, offset in
            calls.append((frames, offset))
            for i in 0..<10 { run[i] = 7 }
            return 10
        }
        XCTAssertEqual(short, 10)
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual((1200..<1210).map { ring.sample(channel: 0, at: $0) }, [Float](repeating: 7, count: 10))
        XCTAssertEqual((1210..<2100).map { ring.sample(channel: 0, at: $0) }, [Float](repeating: 0, count: 890))
        // A failed fill (-1) writes silence and reports nothing filled.
        ring.releaseFrames(upTo: 2100)
        XCTAssertEqual(ring.writeMono(frameCount: 5) { _, _, _ in -1 }, 0)
        XCTAssertEqual((2100..<2105).map { ring.sample(channel: 0, at: $0) }, [Float](repeating: 0, count: 5))
    }

    /// `copy` across the wrap equals the per-frame samples times the gains (per frame, or one).
    func testCopyAcrossTheWrapAppliesTheGains() {
        let ring = StreamRing(channelCount: 2, minimumCapacity: 1000)
        let frames: [Float] = (0..<1000).flatMap { [Float($0), -Float($0)] }
        frames.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frameCount: 1000) }
        ring.releaseFrames(upTo: 900)
        let more: [Float] = (1000..<1400).flatMap { [Float($0), -Float($0)] }
        more.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frameCount: 400) }
        // Frames 950..<1350: slots 950..<1024, then 0..<326.
        let gains = (0..<400).map { Float($0 % 7) * 0.25 }
        var out = [Float](repeating: .nan, count: 400)
        gains.withUnsafeBufferPointer { g in
            out.withUnsafeMutableBufferPointer { ring.copy(channel: 1, from: 950, count: 400, into: $0.baseAddress!, gains: g.baseAddress, gain: 0) }
        }
        XCTAssertEqual(out, (0..<400).map { -Float(950 + $0) * gains[$0] })
        out.withUnsafeMutableBufferPointer { ring.copy(channel: 0, from: 950, count: 400, into: $0.baseAddress!, gains: nil, gain: 0.5) }
        XCTAssertEqual(out, (0..<400).map { Float(950 + $0) * 0.5 })
    }

    /// Frame k carries k (left) and -k (right); pieces of varying sizes on both sides, the
    /// consumer checks every frame and skips ahead now and then as a seek would.
    func testAProducerAndAConsumerThreadPassEveryFrameInOrder() {
        let ring = StreamRing(channelCount: 2, minimumCapacity: 4096)
        let total = 2_000_000
        let producer = Thread {
            var next = 0
            var piece = [Float](repeating: 0, count: 2 * 997)
            var size = 1
            while next < total {
                size = size % 997 + 1
                let n = min(size, total - next, ring.freeFrames)
                if n == 0 { continue }
                for i in 0..<n {
                    piece[2 * i] = Float(next + i)
                    piece[2 * i + 1] = -Float(next + i)
                }
                piece.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frameCount: n) }
                next += n
            }
        }
        producer.start()
        var index = 0
        var errors = 0
        var step = 0
        while index < total {
            let available = ring.writtenIndex - index
            if available == 0 { continue }
            step += 1
            let n = min(available, step % 701 + 1)
            for i in 0..<n where ring.sample(channel: 0, at: index + i) != Float(index + i)
                || ring.sample(channel: 1, at: index + i) != -Float(index + i) { errors += 1 }
            index += n
            ring.releaseFrames(upTo: index)
        }
        XCTAssertEqual(index, total)
        XCTAssertEqual(errors, 0, "frames arrived out of order or torn")
    }
}
