// MemoryBudget: delay-line sizes and the machine's memory, against independent figures.

import Foundation
import XCTest
@testable import AudioGraphCore

final class MemoryBudgetTests: XCTestCase {
    func testDelayLineCapacityIsThePowerOfTwoHoldingTwoSeconds() {
        for rate in [1.0, 8000, 44100, 48000, 96000, 768_000] {
            let capacity = MemoryBudget.delayLineCapacity(sampleRate: rate)
            let needed = Int((2 * rate).rounded(.up)) + 3
            XCTAssertGreaterThanOrEqual(capacity, needed, "\(rate)")
            XCTAssertLessThan(capacity / 2, needed, "\(rate): the smallest such power")
            XCTAssertEqual(capacity & (capacity - 1), 0, "\(rate): a power of two")
        }
        XCTAssertEqual(MemoryBudget.delayLineCapacity(sampleRate: 48000), 131_072)
        // 2^21 frames × (input + output history) × 256 channels × 4 bytes.
        XCTAssertEqual(MemoryBudget.delayLineBytes(sampleRate: 768_000, channels: 256), 2_097_152 * 2 * 256 * 4)
    }

    /// The physical memory sysconf reports agrees with /proc/meminfo's MemTotal (kB).
    func testPhysicalMemoryMatchesProcMeminfo() throws {
        let meminfo = try String(contentsOfFile: "/proc/meminfo", encoding: .utf8)
        let line = try XCTUnwrap(meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") })
        let kB = try XCTUnwrap(Int64(line.split(separator: " ")[1]))
        let bytes = try XCTUnwrap(MemoryBudget.physicalMemory)
        XCTAssertEqual(Double(bytes), Double(kB * 1024), accuracy: Double(kB * 1024) * 0.02)
        XCTAssertEqual(MemoryBudget.limit, bytes / 2)
    }

    func testDescribe() {
        XCTAssertEqual(MemoryBudget.describe(4_294_967_296), "4.3 GB")
        XCTAssertEqual(MemoryBudget.describe(268_435_456), "269 MB")
    }
}
