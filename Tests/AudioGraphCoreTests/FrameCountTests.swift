// FrameCount: seconds-times-rate products become frame counts that saturate instead of trapping.

import XCTest
@testable import AudioGraphCore

final class FrameCountTests: XCTestCase {
    func testOrdinaryValuesRoundAsBefore() {
        XCTAssertEqual(FrameCount.frames(seconds: 1.5, sampleRate: 48000), 72000)
        XCTAssertEqual(FrameCount.frames(seconds: 0.1, sampleRate: 44100), 4410)
        XCTAssertEqual(FrameCount.int64(2.5), 3, "half away from zero, like .rounded()")
        XCTAssertEqual(FrameCount.int64(-2.5), -3)
        XCTAssertEqual(FrameCount.int64(2.2, rounding: .up), 3)
        XCTAssertEqual(FrameCount.int(7.9, rounding: .down), 7)
    }

    /// The values the fuzzer fed to `Int64(_:)`: each would trap; here they saturate.
    func testHugeInfiniteAndNaNValuesSaturate() {
        XCTAssertEqual(FrameCount.frames(seconds: 1e300, sampleRate: 48000), .max)
        XCTAssertEqual(FrameCount.frames(seconds: 1e15, sampleRate: 1e9), .max)
        XCTAssertEqual(FrameCount.int64(-1e300), .min)
        XCTAssertEqual(FrameCount.int64(.infinity), .max)
        XCTAssertEqual(FrameCount.int64(-.infinity), .min)
        XCTAssertEqual(FrameCount.int64(.nan), 0)
        // 2^63 itself is out of range; the largest double below it is in range.
        XCTAssertEqual(FrameCount.int64(9_223_372_036_854_775_808.0), .max)
        XCTAssertEqual(FrameCount.int64(9_223_372_036_854_774_784.0), 9_223_372_036_854_774_784)
        XCTAssertEqual(FrameCount.int(1e300), Int.max)
    }
}
