// VoiceProcessor against webrtc-audio-processing itself, offline: a synthetic echo cancelled (ERLE), the near end kept, bypass bit for bit, mute, the render path real-time safe.
@testable import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class VoiceProcessorTests: XCTestCase {
    static let rate = 48000

    /// Speech-like far end: noise through a one-pole low-pass, its level swung at 3 Hz; silent
    /// where `silent` says.
    static func farEnd(count: Int, silent: (Double) -> Bool) -> [Float] {
        var random = SeededRandom(seed: 19)
        var lp: Float = 0
        return (0..<count).map { n in
            let u = Float(Double(random.next() >> 11) / Double(1 << 53)) * 2 - 1
            lp = 0.9 * lp + 0.1 * u * 1.7
            let t = Double(n) / Double(rate)
            return silent(t) ? 0 : 0.8 * lp * Float(0.5 + 0.5 * sin(2 * Double.pi * 3 * t))
        }
    }

    /// A voiced near end: six harmonics of a gliding 180 Hz, in syllables (350 ms on, 150 off), from `start` seconds.
    static func nearEnd(count: Int, start: Double, amplitude: Double = 0.08) -> [Float] {
        (0..<count).map { n in
            let t = Double(n) / Double(rate)
            guard t >= start, (t - start).truncatingRemainder(dividingBy: 0.5) < 0.35 else { return 0 }
            var v = 0.0
            for h in 1...6 { v += sin(2 * Double.pi * 180 * Double(h) * t * (1 + 0.03 * sin(2 * Double.pi * 1.3 * t))) / Double(h) }
            return Float(amplitude * v * (0.6 + 0.4 * sin(2 * Double.pi * 4 * t)))
        }
    }

    /// The echo a room would add: the far end 20 ms later, -8 dB, with a decaying tail of 4 taps 1 ms apart.
    static func echo(of far: [Float]) -> [Float] {
        (0..<far.count).map { n in
            var e: Float = 0
            for k in 0..<5 { let m = n - 960 - 48 * k; if m >= 0 { e += far[m] * 0.4 * pow(0.5, Float(k)) } }
            return e
        }
    }

    static func level(_ x: ArraySlice<Float>) -> Double {
        10 * log10(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count)) + 1e-20)
    }

    /// Drives `p` as the engine's render thread would, in slices of `slice` frames: the played
    /// slice, then the captured one; waits for the worker after each complete 10 ms frame so
    /// that no frame is late. Returns the processed capture (mono).
    func run(_ p: VoiceProcessor, far: [Float], mic: [Float], slice: Int = 480) throws -> [Float] {
        let out = ChannelBufferStorage(channelCount: 1, capacity: slice)
        var result: [Float] = []
        let playedPointer = [UnsafeMutablePointer<Float>.allocate(capacity: slice)]
        defer { playedPointer[0].deallocate() }
        var done = 0
        while done + slice <= mic.count {
            playedPointer[0].update(from: Array(far[done..<done + slice]), count: slice)
            playedPointer.withUnsafeBufferPointer { p.observePlayback($0.baseAddress!, channelCount: 1, frameCount: slice) }
            out.list.channel(0).update(from: Array(mic[done..<done + slice]), count: slice)
            let expected = (done + slice) / p.frameCount
            let deadline = Date().addingTimeInterval(5)
            p.processCapture(out.list, frameCount: slice)
            while p.processedFrameCount < expected {
                guard Date() < deadline else { throw NSError(domain: "VoiceProcessorTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "the worker did not answer within 5 s"]) }
                usleep(100)
            }
            result += UnsafeBufferPointer(start: out.list.channel(0), count: slice)
            done += slice
        }
        return result
    }

    /// 6 s of far end (its echo in the microphone), 2 s of near end alone, 2 s of both. The
    /// echo is gone by the measured ERLE; the near end alone comes through at its level.
    func testTheEchoIsCancelledAndTheNearEndStays() throws {
        let count = 10 * Self.rate
        let far = Self.farEnd(count: count) { $0 >= 6 && $0 < 8 }
        let near = Self.nearEnd(count: count, start: 6)
        let echo = Self.echo(of: far)
        let mic = zip(echo, near).map { $0 + $1 }
        let p = try VoiceProcessor(sampleRate: Self.rate, channelCount: 1, maximumFramesPerSlice: 480, delayMilliseconds: 20)
        defer { p.stop() }
        p.isGainControlEnabled = false
        let out = try run(p, far: far, mic: mic)
        let lag = p.latencyFrames
        let r = Self.rate
        // Echo alone, after 2 s of adaptation: 2-6 s.
        let echoLevel = Self.level(mic[2 * r..<6 * r]), residual = Self.level(out[2 * r + lag..<6 * r + lag])
        let erle = echoLevel - residual
        // Near end alone, after the far end has been silent for 0.5 s: 6.5-8 s.
        let nearLevel = Self.level(near[6 * r + r / 2..<8 * r]), nearOut = Self.level(out[6 * r + r / 2 + lag..<8 * r + lag])
        // Both (double talk): 8.5-10 s, what is left of the near end.
        let doubleTalk = Self.level(out[8 * r + r / 2 + lag..<10 * r - 480]) - Self.level(near[8 * r + r / 2..<10 * r - 480 - lag])
        print("VoiceProcessor (48 kHz, echo -8 dB 20 ms late): ERLE \(erle) dB (echo \(echoLevel) dB -> \(residual) dB); "
              + "near end alone \(nearLevel) dB -> \(nearOut) dB; double talk: output minus near end \(doubleTalk) dB; "
              + "late frames \(p.lateFrameCount), failures \(p.failureCount)")
        XCTAssertGreaterThan(erle, 30)
        XCTAssertEqual(nearOut, nearLevel, accuracy: 3)
        XCTAssertEqual(p.lateFrameCount, 0)
        XCTAssertEqual(p.failureCount, 0)
        XCTAssertEqual(p.lostFrameCount, 0)
    }

    /// Bypassed, the capture comes through bit for bit, `latencyFrames` late (silence before);
    /// muted, silence; in slices that are not 10 ms.
    func testBypassPassesTheCaptureBitForBitAndMuteSilencesIt() throws {
        let count = Self.rate
        let far = Self.farEnd(count: count) { _ in false }
        let mic = zip(Self.echo(of: far), Self.nearEnd(count: count, start: 0)).map { $0 + $1 }
        let p = try VoiceProcessor(sampleRate: Self.rate, channelCount: 1, maximumFramesPerSlice: 512, delayMilliseconds: 20)
        defer { p.stop() }
        p.isBypassed = true
        let out = try run(p, far: far, mic: Array(mic.prefix(count / 160 * 160)), slice: 160)
        let lag = p.latencyFrames
        XCTAssertEqual(lag, 2 * 480 + 512)
        XCTAssertTrue(out.prefix(lag).allSatisfy { $0 == 0 })
        XCTAssertTrue(Array(out[lag...]) == Array(mic[..<(out.count - lag)]), "bypass is not bit-exact")
        p.isMuted = true
        let muted = try run(p, far: far, mic: Array(mic.prefix(9600)), slice: 160)
        XCTAssertTrue(muted.allSatisfy { $0 == 0 })
    }

    /// A late worker (held for 8 slices, longer than the primed latency) leaves silence in
    /// place of the missing frames; once it catches up those frames are discarded, not played
    /// late: the bypassed capture is again exactly `latencyFrames` behind, bit for bit.
    func testTheDelayReturnsToTheLatencyAfterTheWorkerWasLate() throws {
        let slice = 480, count = 40 * slice
        let mic = (0..<count).map { Float($0 + 1) / Float(4 * count) }   // every sample distinct
        let p = try VoiceProcessor(sampleRate: Self.rate, channelCount: 1, maximumFramesPerSlice: slice, delayMilliseconds: 20)
        defer { p.stop() }
        p.isBypassed = true
        let lag = p.latencyFrames
        let out = ChannelBufferStorage(channelCount: 1, capacity: slice)
        var result: [Float] = []
        for k in 0..<40 {
            let held = (10..<18).contains(k)
            p.holdsWorkerForTesting.store(held, ordering: .relaxed)
            if k == 18 {   // the worker catches up on the held slices before the next read
                let deadline = Date().addingTimeInterval(5)
                while p.processedFrameCount < k * slice / p.frameCount {
                    guard Date() < deadline else { return XCTFail("the worker did not catch up within 5 s") }
                    usleep(100)
                }
            }
            out.list.channel(0).update(from: Array(mic[k * slice..<(k + 1) * slice]), count: slice)
            p.processCapture(out.list, frameCount: slice)
            result += UnsafeBufferPointer(start: out.list.channel(0), count: slice)
            if !held {
                let expected = (k + 1) * slice / p.frameCount
                let deadline = Date().addingTimeInterval(5)
                while p.processedFrameCount < expected {
                    guard Date() < deadline else { return XCTFail("the worker did not answer within 5 s") }
                    usleep(100)
                }
            }
        }
        // 8 held slices of 480 frames, of which the primed 1440 were there: 2400 late frames.
        XCTAssertEqual(p.lateFrameCount, 8 * slice - lag)
        XCTAssertEqual(p.lostFrameCount, 0)
        // After recovery (the last 10 slices), the delay is the nominal latency.
        let from = 30 * slice
        XCTAssertTrue(Array(result[from...]) == Array(mic[(from - lag)..<(count - lag)]),
                      "the delay after the late episode is not latencyFrames")
    }

    /// Muted, the listener hears speech start once (voiced syllables with 150 ms gaps are one
    /// stretch of speech) and end once, 300 ms after it stopped; unmuted, nothing.
    func testTheMutedSpeechListenerIsToldOfEachChangeOnce() throws {
        let r = Self.rate
        let voice = Self.nearEnd(count: 2 * r, start: 0.3, amplitude: 0.2)
        let mic = voice + [Float](repeating: 0, count: r)
        let p = try VoiceProcessor(sampleRate: r, channelCount: 1, maximumFramesPerSlice: 480, delayMilliseconds: 20)
        defer { p.stop() }
        final class Events: @unchecked Sendable {
            let lock = NSLock()
            var list: [(AudioVoiceProcessingSpeechActivityEvent, Int)] = []
        }
        let events = Events()
        p.setMutedSpeechListener { event in
            events.lock.lock()
            events.list.append((event, p.processedFrameCount))
            events.lock.unlock()
        }
        p.isMuted = true
        let out = try run(p, far: [Float](repeating: 0, count: mic.count), mic: mic)
        XCTAssertTrue(out.allSatisfy { $0 == 0 }, "muted")
        p.isMuted = false
        _ = try run(p, far: [Float](repeating: 0, count: mic.count), mic: mic)
        events.lock.lock()
        defer { events.lock.unlock() }
        print("muted speech events (event, 10 ms frame): \(events.list)")
        XCTAssertEqual(events.list.map(\.0), [.started, .ended])
        if events.list.count == 2 {
            // Speech from frame 30 (0.3 s) to about frame 200 (2 s), ended 300 ms later.
            XCTAssertEqual(Double(events.list[0].1), 31, accuracy: 5)
            XCTAssertEqual(Double(events.list[1].1), 230, accuracy: 15)
        }
    }

    /// The render-thread half (`processCapture`, `observePlayback`) neither allocates nor locks,
    /// while webrtc (which locks) runs on the worker.
    func testTheRenderPathIsRealTimeSafe() throws {
        let p = try VoiceProcessor(sampleRate: Self.rate, channelCount: 2, maximumFramesPerSlice: 512, delayMilliseconds: 20)
        defer { p.stop() }
        let captured = ChannelBufferStorage(channelCount: 2, capacity: 512)
        let played = [UnsafeMutablePointer<Float>.allocate(capacity: 512), UnsafeMutablePointer<Float>.allocate(capacity: 512)]
        defer { played.forEach { $0.deallocate() } }
        let far = Self.farEnd(count: 512) { _ in false }
        for c in 0..<2 {
            played[c].update(from: far, count: 512)
            captured.list.channel(c).update(from: far, count: 512)
        }
        let sizes = [32, 128, 512, 480]
        let counts = played.withUnsafeBufferPointer { pointers in
            RealTimeScaffold.count {
                for round in 0..<400 {
                    let n = sizes[round % 4]
                    p.observePlayback(pointers.baseAddress!, channelCount: 2, frameCount: n)
                    p.processCapture(captured.list, frameCount: n)
                    p.isMuted = round % 7 == 0
                    p.isBypassed = round % 11 == 0
                }
            }.counts
        }
        XCTAssertNil(counts.violation, "\(counts)")
        let deadline = Date().addingTimeInterval(5)
        // 115 200 frames were handed over faster than webrtc takes them: the 1 s capture ring
        // (100 frames of 10 ms) at least was processed, the rest counted in lostFrameCount.
        while p.processedFrameCount < 100 && Date() < deadline { usleep(1000) }
        usleep(50_000)
        XCTAssertGreaterThanOrEqual(p.processedFrameCount, 100, "the worker processed the frames")
    }
}

extension VoiceProcessorTests {
    /// webrtc-audio-processing is loaded on first use (CVoiceProcessing through CLazyLibrary):
    /// when it cannot be, making a processor throws an error naming the library instead of the
    /// CLI failing to start (AG_LAZY_LIBRARY_MISSING, the loader's test hook); the next one works.
    func testAMissingLibraryIsAnErrorNamingIt() throws {
        setenv("AG_LAZY_LIBRARY_MISSING", "libwebrtc_audio_processing.so.1", 1)
        do {
            defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
            XCTAssertThrowsError(try VoiceProcessor(sampleRate: Self.rate, channelCount: 1, maximumFramesPerSlice: 480,
                                                    delayMilliseconds: 20)) { error in
                XCTAssertTrue("\(error)".contains("cannot load webrtc-audio-processing: libwebrtc_audio_processing.so.1"), "\(error)")
            }
        }
        let p = try VoiceProcessor(sampleRate: Self.rate, channelCount: 1, maximumFramesPerSlice: 480, delayMilliseconds: 20)
        XCTAssertEqual(p.frameCount, 480)
    }
}
