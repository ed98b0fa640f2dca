// VoiceProcessingSettings' hand-off of the processor to the render thread: atomic publication, replaced processors kept alive until the stream is gone.
@testable import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class VoiceProcessingSettingsTests: XCTestCase {
    /// A replaced processor stays alive (a render callback may still hold it) until
    /// `dropRetiredProcessors`; the played slices reach the current processor only (its 1 s
    /// far ring overflows, counted in lostFrameCount, with no capture to drain it), without
    /// allocation or lock.
    func testAReplacedProcessorOutlivesTheRenderCallbackAndPlaybackReachesTheCurrentOne() throws {
        let settings = VoiceProcessingSettings()
        weak var first: VoiceProcessor?
        do {
            first = try settings.makeProcessor(sampleRate: 48000, channelCount: 1, maximumFramesPerSlice: 512, delayMilliseconds: 20)
        }
        let second = try settings.makeProcessor(sampleRate: 48000, channelCount: 1, maximumFramesPerSlice: 512, delayMilliseconds: 20)
        XCTAssertNotNil(first, "the replaced processor was freed while a render callback could still use it")
        let played = [UnsafeMutablePointer<Float>.allocate(capacity: 512)]
        defer { played.forEach { $0.deallocate() } }
        played[0].initialize(repeating: 0.1, count: 512)
        let counts = played.withUnsafeBufferPointer { pointers in
            RealTimeScaffold.count {
                for _ in 0..<100 { settings.observePlayback(pointers.baseAddress!, channelCount: 1, frameCount: 512) }
            }.counts
        }
        XCTAssertNil(counts.violation, "\(counts)")
        XCTAssertGreaterThanOrEqual(second.lostFrameCount, 100 * 512 - 48000)   // a slice partly written counts whole
        XCTAssertEqual(first?.lostFrameCount, 0)
        settings.dropRetiredProcessors()
        XCTAssertNil(first)
        settings.discardProcessor()
    }
}
