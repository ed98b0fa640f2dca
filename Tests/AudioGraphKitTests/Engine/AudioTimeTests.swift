// AudioTime: validity, host-time conversions, timestamps and extrapolation, against hand-computed values.
import AudioGraphKit
import Foundation
import XCTest

final class AudioTimeTests: XCTestCase {
    func testInitializersSetValidity() {
        let s = AudioTime(sampleTime: 4800, atRate: 48000)
        XCTAssertTrue(s.isSampleTimeValid)
        XCTAssertFalse(s.isHostTimeValid)
        XCTAssertEqual(s.sampleTime, 4800)
        XCTAssertEqual(s.sampleRate, 48000)

        let h = AudioTime(hostTime: 123_456_789)
        XCTAssertTrue(h.isHostTimeValid)
        XCTAssertFalse(h.isSampleTimeValid)
        XCTAssertEqual(h.hostTime, 123_456_789)

        let both = AudioTime(hostTime: 5, sampleTime: -7, atRate: 44100)
        XCTAssertTrue(both.isHostTimeValid && both.isSampleTimeValid)
        XCTAssertEqual(both.sampleTime, -7)
        XCTAssertEqual(both.hostTime, 5)
    }

    func testHostTimeIsNanoseconds() {
        XCTAssertEqual(AudioTime.hostTime(forSeconds: 1.5), 1_500_000_000)
        XCTAssertEqual(AudioTime.hostTime(forSeconds: 0.000_000_001), 1)
        XCTAssertEqual(AudioTime.hostTime(forSeconds: -2), 0)
        XCTAssertEqual(AudioTime.seconds(forHostTime: 250_000_000), 0.25)
        XCTAssertEqual(AudioTime.seconds(forHostTime: AudioTime.hostTime(forSeconds: 12.345678)), 12.345678, accuracy: 1e-9)
    }

    func testCurrentHostTimeIsTheMonotonicClock() {
        // ProcessInfo.systemUptime reads CLOCK_MONOTONIC on Linux: an independent reader of the same clock.
        let before = ProcessInfo.processInfo.systemUptime
        let now = AudioTime.seconds(forHostTime: AudioTime.currentHostTime)
        let after = ProcessInfo.processInfo.systemUptime
        XCTAssertGreaterThanOrEqual(now, before - 1e-6)
        XCTAssertLessThanOrEqual(now, after + 1e-6)
        let a = AudioTime.currentHostTime, b = AudioTime.currentHostTime
        XCTAssertLessThanOrEqual(a, b)
    }

    func testAudioTimeStampRoundTrip() {
        let t = AudioTime(hostTime: 2_000_000_000, sampleTime: 96000, atRate: 48000)
        var ts = t.audioTimeStamp
        XCTAssertEqual(ts.mSampleTime, 96000)
        XCTAssertEqual(ts.mHostTime, 2_000_000_000)
        XCTAssertEqual(ts.mFlags, .sampleHostTimeValid)
        XCTAssertEqual(ts.mFlags.rawValue, 3)
        let back = AudioTime(audioTimeStamp: &ts, sampleRate: 48000)
        XCTAssertEqual(back.sampleTime, 96000)
        XCTAssertEqual(back.hostTime, 2_000_000_000)

        var sampleOnly = AudioTimeStamp(mSampleTime: 512.75, mHostTime: 99, mRateScalar: 1, mWordClockTime: 0,
                                        mFlags: .sampleTimeValid)
        let s = AudioTime(audioTimeStamp: &sampleOnly, sampleRate: 44100)
        XCTAssertEqual(s.sampleTime, 512)
        XCTAssertFalse(s.isHostTimeValid)
        XCTAssertEqual(s.audioTimeStamp.mFlags, .sampleTimeValid)
        XCTAssertEqual(AudioTimeStampFlags.rateScalarValid.rawValue, 4)
        XCTAssertEqual(AudioTimeStampFlags.wordClockTimeValid.rawValue, 8)
    }

    func testExtrapolateHostTimeFromSampleTime() throws {
        let anchor = AudioTime(hostTime: 10_000_000_000, sampleTime: 480_000, atRate: 48000)
        // 48000 frames after the anchor: one second later.
        let later = try XCTUnwrap(AudioTime(sampleTime: 528_000, atRate: 48000).extrapolateTime(fromAnchor: anchor))
        XCTAssertEqual(later.hostTime, 11_000_000_000)
        XCTAssertEqual(later.sampleTime, 528_000)
        XCTAssertTrue(later.isHostTimeValid && later.isSampleTimeValid)
        // 12000 frames before: 0.25 s earlier.
        let earlier = try XCTUnwrap(AudioTime(sampleTime: 468_000, atRate: 48000).extrapolateTime(fromAnchor: anchor))
        XCTAssertEqual(earlier.hostTime, 9_750_000_000)
    }

    func testExtrapolateSampleTimeFromHostTime() throws {
        let anchor = AudioTime(hostTime: 10_000_000_000, sampleTime: 480_000, atRate: 48000)
        let t = try XCTUnwrap(AudioTime(hostTime: 9_500_000_000).extrapolateTime(fromAnchor: anchor))
        XCTAssertEqual(t.sampleTime, 456_000)   // 480000 - 0.5 s × 48000
        XCTAssertEqual(t.sampleRate, 48000)
        XCTAssertEqual(t.hostTime, 9_500_000_000)
    }

    func testExtrapolateConvertsTheAnchorToTheReceiversRate() throws {
        // The anchor's 96000 frames at 48 kHz are 88200 frames at 44.1 kHz (2 s).
        let anchor = AudioTime(hostTime: 5_000_000_000, sampleTime: 96000, atRate: 48000)
        let t = try XCTUnwrap(AudioTime(sampleTime: 132_300, atRate: 44100).extrapolateTime(fromAnchor: anchor))
        XCTAssertEqual(t.hostTime, 6_000_000_000)   // 44100 frames later = 1 s
        XCTAssertEqual(t.sampleRate, 44100)
    }

    func testExtrapolateNeedsACompleteAnchor() {
        XCTAssertNil(AudioTime(sampleTime: 1, atRate: 48000).extrapolateTime(fromAnchor: AudioTime(sampleTime: 0, atRate: 48000)))
        XCTAssertNil(AudioTime(sampleTime: 1, atRate: 48000).extrapolateTime(fromAnchor: AudioTime(hostTime: 0)))
    }
}
