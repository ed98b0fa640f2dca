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

    /// The render quantum: the largest power of two at most half a request, lowered to a divisor
    /// of the graph's slice (so slice boundaries stay quantum boundaries), never above the slice.
    func testPlaybackQuantumIsSizedFromTheLatencyAndDividesTheSlice() {
        func quantum(_ latency: Double, slice: Int, rate: Int = 48000) -> Int {
            PulseStreamConfiguration(sampleRate: rate, latencyMilliseconds: latency,
                                     maximumFramesPerSlice: slice).playbackQuantumFrames
        }
        XCTAssertEqual(quantum(10, slice: 256), 32)     // request 2.5 ms = 120 frames, half 60 → 32
        XCTAssertEqual(quantum(20, slice: 512), 32)     // the same request: independent of the slice
        XCTAssertEqual(quantum(40, slice: 256), 64)     // 5 ms = 240 frames, half 120 → 64
        XCTAssertEqual(quantum(100, slice: 256), 256)   // 12.5 ms = 600, half 300 → 256
        XCTAssertEqual(quantum(100, slice: 4096), 256)
        XCTAssertEqual(quantum(100, slice: 128), 128)   // never above the slice
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

    /// The ring holds one request in whole quanta and nothing more (its fill adds to the latency).
    func testPlaybackRingHoldsOneRequestInWholeQuanta() {
        func ring(_ latency: Double, slice: Int, rate: Int = 48000) -> Int {
            PulseStreamConfiguration(sampleRate: rate, latencyMilliseconds: latency,
                                     maximumFramesPerSlice: slice).playbackRingFrames
        }
        XCTAssertEqual(ring(10, slice: 256), 128)      // request 120 frames: 4 quanta of 32 (2.7 ms)
        XCTAssertEqual(ring(20, slice: 256), 128)
        XCTAssertEqual(ring(20, slice: 4096), 128)     // independent of the slice
        XCTAssertEqual(ring(40, slice: 256), 256)      // 240 frames: 4 quanta of 64
        XCTAssertEqual(ring(100, slice: 256), 768)     // 600 frames: 3 quanta of 256
        XCTAssertEqual(ring(20, slice: 128, rate: 44100), 128) // 2.5 ms = 110.25 → 111 frames: 4 × 32
        XCTAssertEqual(ring(10, slice: 441), 126)      // 120 frames: 6 quanta of 21
    }
}
