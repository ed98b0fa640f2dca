// Tests of the schedule record ring: order, capacity, and a producer and consumer racing on two threads.
import Foundation
import XCTest
@testable import AudioGraphNodes

final class ScheduleRecordRingTests: XCTestCase {
    func testRecordsComeOutInOrderAndAFullRingRefuses() {
        let ring = ScheduleRecordRing(minimumCapacity: 5)
        XCTAssertEqual(ring.capacity, 8)
        XCTAssertNil(ring.pop())
        for i in 0..<8 { XCTAssertTrue(ring.push(ScheduleRecord(kind: .play, time: Int64(i)))) }
        XCTAssertFalse(ring.push(ScheduleRecord(kind: .play, time: 99)), "a full ring must refuse")
        XCTAssertEqual(ring.count, 8)
        for i in 0..<8 { XCTAssertEqual(ring.pop()?.time, Int64(i)) }
        XCTAssertNil(ring.pop())
    }

    /// 200 000 records through a 64-record ring between two threads: every one arrives, in order.
    func testProducerAndConsumerOnTwoThreadsKeepEveryRecordInOrder() {
        let ring = ScheduleRecordRing(minimumCapacity: 64)
        let total = 200_000
        let producer = Thread {
            var i = 0
            while i < total {
                if ring.push(ScheduleRecord(kind: .finished, time: Int64(i), hostTime: UInt64(i) * 3)) { i += 1 }
            }
        }
        producer.start()
        var expected: Int64 = 0
        while expected < Int64(total) {
            guard let r = ring.pop() else { continue }
            XCTAssertEqual(r.time, expected)
            XCTAssertEqual(r.hostTime, UInt64(expected) * 3)
            if r.time != expected { return }
            expected += 1
        }
        XCTAssertNil(ring.pop())
    }
}
