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

    /// The ring holds whole slices: two, or one more than a request needs.
    func testPlaybackRingHoldsARequestAndASlice() {
        func ring(_ latency: Double, slice: Int, rate: Int = 48000) -> Int {
            PulseStreamConfiguration(sampleRate: rate, latencyMilliseconds: latency,
                                     maximumFramesPerSlice: slice).playbackRingFrames
        }
        XCTAssertEqual(ring(20, slice: 256), 512)      // request 120 frames: 1 slice + 1
        XCTAssertEqual(ring(20, slice: 64), 192)       // 120 frames: 2 slices + 1
        XCTAssertEqual(ring(100, slice: 256), 1024)    // 600 frames: 3 slices + 1
        XCTAssertEqual(ring(20, slice: 4096), 8192)    // at least two slices
        XCTAssertEqual(ring(20, slice: 128, rate: 44100), 256) // 2.5 ms = 110.25 → 111 frames
    }
}
