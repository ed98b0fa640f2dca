// AudioSourceNode's render block: what a failed slice gives and counts, and the time stamps the block is handed.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioSourceNodeTests: XCTestCase {
    /// A block that returns a status other than `noErr` on its 2nd and 4th calls: those slices
    /// are silent (whatever the block wrote), the others carry its constant through the main
    /// mixer unchanged, and `failedRenderCount` is 2.
    func testAFailedSliceIsSilentAndCounted() throws {
        let engine = try makeManualEngine()
        let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 2))
        let calls = Counter()
        let source = AudioSourceNode(format: format) { _, _, frameCount, data in
            calls.value += 1
            for b in UnsafeMutableAudioBufferListPointer(data) {
                b.mData!.assumingMemoryBound(to: Float.self).update(repeating: 0.25, count: Int(frameCount))
            }
            return calls.value % 2 == 0 ? -50 : noErr
        }
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        try engine.start()
        XCTAssertEqual(source.failedRenderCount, 0)
        let out = try render(engine, frames: 5000, piece: 1000)
        XCTAssertEqual(calls.value, 5)
        for c in 0..<2 {
            for piece in 0..<5 {
                let expected: Float = piece % 2 == 1 ? 0 : 0.25
                XCTAssertEqual(out[c][(piece * 1000)..<((piece + 1) * 1000)], ArraySlice(repeating: expected, count: 1000),
                               "channel \(c) piece \(piece)")
            }
        }
        XCTAssertEqual(source.failedRenderCount, 2)
    }

    /// The block's time stamp: the sample time counts the frames of the calls before it from 0,
    /// sample, host time and rate scalar are marked valid, the rate scalar is 1 and the host time
    /// moves forward (AVAudioSourceNodeRenderBlock's `timestamp`).
    func testTheTimeStampCountsFramesFromTheStart() throws {
        let engine = try makeManualEngine()
        let stamps = StampLog()
        let source = AudioSourceNode { _, timestamp, frameCount, _ in
            stamps.entries.append((timestamp.pointee, Int(frameCount)))
            return noErr
        }
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        try engine.start()
        _ = try render(engine, frames: 3100, piece: 700)
        XCTAssertEqual(stamps.entries.map(\.1).reduce(0, +), 3100)
        var frames = 0
        var lastHostTime: UInt64 = 0
        for (stamp, count) in stamps.entries {
            XCTAssertEqual(stamp.mSampleTime, Double(frames))
            XCTAssertTrue(stamp.mFlags.contains([.sampleTimeValid, .hostTimeValid, .rateScalarValid]))
            XCTAssertEqual(stamp.mRateScalar, 1)
            XCTAssertGreaterThanOrEqual(stamp.mHostTime, lastHostTime)
            XCTAssertGreaterThan(stamp.mHostTime, 0)
            lastHostTime = stamp.mHostTime
            frames += count
        }
    }
}

/// A call counter a block captures.
private final class Counter: @unchecked Sendable {
    var value = 0
}

/// The time stamps and frame counts a block was handed.
private final class StampLog: @unchecked Sendable {
    var entries: [(AudioTimeStamp, Int)] = []
}
