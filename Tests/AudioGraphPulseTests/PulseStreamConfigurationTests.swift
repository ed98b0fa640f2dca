// Tests of the playback buffering a stream configuration derives: request size and ring capacity.
import AudioGraphPulse
import XCTest

final class PulseStreamConfigurationTests: XCTestCase {
    /// minreq is an eighth of the latency, at least 2.5 ms, at most half the latency.
    func testPlaybackRequestIsAnEighthOfTheLatencyWithinBounds() {
        func request(_ latency: Double) -> Double {
            PulseStreamConfiguration(latencyMilliseconds: latency).playbackRequestMilliseconds
        }
        XCTAssertEqual(request(20), 2.5)
        XCTAssertEqual(request(40), 5)
        XCTAssertEqual(request(100), 12.5)
        XCTAssertEqual(request(10), 2.5)
        XCTAssertEqual(request(4), 2)
        XCTAssertEqual(request(1), 0.5)
    }

    /// The ring is sized for a request, at most 4 ms.
    func testPlaybackRingMillisecondsIsARequestAtMostFour() {
        func ring(_ latency: Double) -> Double {
            PulseStreamConfiguration(latencyMilliseconds: latency).playbackRingMilliseconds
        }
        XCTAssertEqual(ring(10), 2.5)
        XCTAssertEqual(ring(20), 2.5)
        XCTAssertEqual(ring(30), 3.75)
        XCTAssertEqual(ring(40), 4)
        XCTAssertEqual(ring(100), 4)
        XCTAssertEqual(ring(1), 0.5)
    }

    /// The render quantum: the largest power of two at most half the ring's target, lowered to a
    /// divisor of the graph's slice (so slice boundaries stay quantum boundaries).
    func testPlaybackQuantumIsSizedFromTheLatencyAndDividesTheSlice() {
        func quantum(_ latency: Double, slice: Int, rate: Int = 48000) -> Int {
            PulseStreamConfiguration(sampleRate: rate, latencyMilliseconds: latency,
                                     maximumFramesPerSlice: slice).playbackQuantumFrames
        }
        XCTAssertEqual(quantum(10, slice: 256), 32)     // ring 2.5 ms = 120 frames, half 60 → 32
        XCTAssertEqual(quantum(20, slice: 512), 32)     // the same: independent of the slice
        XCTAssertEqual(quantum(40, slice: 256), 64)     // 4 ms = 192 frames, half 96 → 64
        XCTAssertEqual(quantum(100, slice: 4096), 64)
        XCTAssertEqual(quantum(100, slice: 32), 32)     // never above the slice
        XCTAssertEqual(quantum(10, slice: 480), 32)     // 480 = 15 × 32
        XCTAssertEqual(quantum(10, slice: 441), 21)     // 441 = 3²·7²: its largest divisor ≤ 32
        XCTAssertEqual(quantum(10, slice: 100), 25)
        XCTAssertEqual(quantum(10, slice: 16), 16)
        XCTAssertEqual(quantum(1, slice: 256), 8)       // 0.5 ms = 24 frames, half 12 → 8
        for slice in [1, 7, 100, 256, 441, 480, 4096] {
            for latency in [1.0, 10, 20, 40, 100, 2000] {
                XCTAssertEqual(slice % quantum(latency, slice: slice), 0, "\(latency) ms, slice \(slice)")
            }
        }
    }

    /// The ring holds its target in whole quanta, and never more than 5 ms (issue 9: our own
    /// buffering adds at most 5 ms to what the server reports).
    func testPlaybackRingHoldsItsTargetInWholeQuantaWithinFiveMilliseconds() {
        func ring(_ latency: Double, slice: Int, rate: Int = 48000) -> Int {
            PulseStreamConfiguration(sampleRate: rate, latencyMilliseconds: latency,
                                     maximumFramesPerSlice: slice).playbackRingFrames
        }
        XCTAssertEqual(ring(10, slice: 256), 128)      // 120 frames: 4 quanta of 32 (2.7 ms)
        XCTAssertEqual(ring(20, slice: 256), 128)
        XCTAssertEqual(ring(20, slice: 4096), 128)     // independent of the slice
        XCTAssertEqual(ring(40, slice: 256), 192)      // 192 frames: 3 quanta of 64 (4 ms)
        XCTAssertEqual(ring(100, slice: 256), 192)
        XCTAssertEqual(ring(20, slice: 128, rate: 44100), 128) // 2.5 ms = 110.25 → 111 frames: 4 × 32
        XCTAssertEqual(ring(10, slice: 441), 126)      // 120 frames: 6 quanta of 21
        XCTAssertEqual(ring(1, slice: 256), 24)        // 24 frames: 3 quanta of 8
        for rate in [8000, 22050, 44100, 48000, 96000, 192000] {
            for slice in [64, 100, 256, 441, 480, 512, 4096] {
                for latency in [10.0, 20, 40, 100, 1000] {
                    XCTAssertLessThanOrEqual(Double(ring(latency, slice: slice, rate: rate)) / Double(rate), 0.005,
                                             "\(latency) ms, slice \(slice), \(rate) Hz")
                }
            }
        }
    }
}
