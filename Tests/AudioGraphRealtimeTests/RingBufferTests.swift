// Tests of the lock-free SPSC RingBuffer: wrap-around, limits, and a two-thread stress run.
import AudioGraphRealtime
import Foundation
import XCTest

final class RingBufferTests: XCTestCase {
    func testWrapAroundKeepsOrderAndLimits() {
        let ring = RingBuffer(capacity: 7)
        var next: Float = 0
        var expected: Float = 0
        let input = UnsafeMutablePointer<Float>.allocate(capacity: 16)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 16)
        defer { input.deallocate(); output.deallocate() }
        for round in 0..<50 {
            let toWrite = (round * 5) % 9 + 1
            for i in 0..<toWrite { input[i] = next + Float(i) }
            let written = ring.write(input, count: toWrite)
            XCTAssertEqual(written, min(toWrite, 7 - (ring.readableCount - written)))
            next += Float(written)
            XCTAssertLessThanOrEqual(ring.readableCount, 7)
            XCTAssertEqual(ring.readableCount + ring.writableCount, 7)
            let read = ring.read(into: output, count: (round * 3) % 8 + 1)
            for i in 0..<read {
                XCTAssertEqual(output[i], expected)
                expected += 1
            }
        }
        XCTAssertEqual(ring.read(into: output, count: 16), Int(next - expected))
        XCTAssertEqual(ring.read(into: output, count: 16), 0)
        XCTAssertEqual(ring.writeSilence(count: 10), 7)
        XCTAssertEqual(ring.discard(count: 3), 3)
        XCTAssertEqual(ring.read(into: output, count: 16), 4)
        XCTAssertTrue((0..<4).allSatisfy { output[$0] == 0 })
    }

    /// A producer and a consumer thread move half a million consecutive values with odd chunk sizes;
    /// the consumer must see every value once, in order.
    func testConcurrentProducerAndConsumerSeeEveryValueInOrder() {
        let ring = RingBuffer(capacity: 1000)
        let total = 500_000
        let producer = Thread {
            let chunk = UnsafeMutablePointer<Float>.allocate(capacity: 97)
            defer { chunk.deallocate() }
            var next = 0
            while next < total {
                let n = min(97, total - next)
                for i in 0..<n { chunk[i] = Float(next + i) }  // exact below 2^24
                var done = 0
                while done < n { done += ring.write(chunk + done, count: n - done) }
                next += n
            }
        }
        producer.start()
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 61)
        defer { out.deallocate() }
        var expected = 0
        var errors = 0
        while expected < total {
            let n = ring.read(into: out, count: 61)
            for i in 0..<n where out[i] != Float(expected + i) { errors += 1 }
            expected += n
        }
        XCTAssertEqual(errors, 0)
        XCTAssertEqual(ring.readableCount, 0)
    }
}
