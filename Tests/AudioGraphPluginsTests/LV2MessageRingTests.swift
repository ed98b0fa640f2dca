// Tests of LV2MessageRing: whole messages in order across many wraps, refusal when full, oversize drop.
import XCTest
@testable import AudioGraphPlugins

final class LV2MessageRingTests: XCTestCase {
    /// Messages of 0...61 bytes (lengths and contents from a counter, so every header and body
    /// lands at a different offset of a 100-byte ring and both split at the wrap) come out
    /// exactly as written, in order; a write that does not fit is refused and changes nothing.
    func testMessagesSurviveWrapsExactly() {
        let ring = LV2MessageRing(capacity: 100)
        let out = UnsafeMutableRawPointer.allocate(byteCount: 100, alignment: 8)
        defer { out.deallocate() }
        var written: [[UInt8]] = []
        var next = 0
        for round in 0..<500 {
            // Write until full (the refused write leaves the ring as it was).
            while true {
                let size = (next * 7 + round) % 62
                let message = (0..<size).map { UInt8(truncatingIfNeeded: next &* 31 &+ $0) }
                let ok = message.withUnsafeBytes { ring.write(size: size, $0.baseAddress) }
                if !ok { break }
                written.append(message)
                next += 1
            }
            // Read about half back.
            for _ in 0..<max(1, written.count / 2) {
                guard let size = ring.read(into: out, capacity: 100) else { break }
                let expected = written.removeFirst()
                XCTAssertEqual(Array(UnsafeRawBufferPointer(start: out, count: size)), expected)
            }
        }
        while let size = ring.read(into: out, capacity: 100) {
            XCTAssertEqual(Array(UnsafeRawBufferPointer(start: out, count: size)), written.removeFirst())
        }
        XCTAssertTrue(written.isEmpty)
        XCTAssertGreaterThan(next, 600)   // many wraps of the 100-byte ring
    }

    /// A message larger than the reader's room is dropped (size 0) and the next one still reads.
    func testOversizeMessageIsDropped() {
        let ring = LV2MessageRing(capacity: 64)
        let out = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        defer { out.deallocate() }
        let big = [UInt8](repeating: 9, count: 20), small: [UInt8] = [1, 2, 3]
        XCTAssertTrue(big.withUnsafeBytes { ring.write(size: 20, $0.baseAddress) })
        XCTAssertTrue(small.withUnsafeBytes { ring.write(size: 3, $0.baseAddress) })
        XCTAssertEqual(ring.read(into: out, capacity: 8), 0)
        XCTAssertEqual(ring.read(into: out, capacity: 8), 3)
        XCTAssertEqual(Array(UnsafeRawBufferPointer(start: out, count: 3)), small)
        XCTAssertNil(ring.read(into: out, capacity: 8))
    }
}
