// AudioPlayer (AVAudioPlayer's shape) playing to a private PulseAudio server: samples heard, loops, seek, pause, meters, rate.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioPlayerTests: DefaultPulseServerTestCase {
    /// A stereo 48 kHz float WAV of `seconds` of a sine at `frequency` and amplitude 0.5.
    private func toneFile(seconds: Double, frequency: Double = 440) throws -> (URL, [Float]) {
        let url = server.directory.appendingPathComponent("tone-\(seconds)-\(frequency).wav")
        let samples = (0..<Int(seconds * 48000)).map { sineSample(Int64($0), frequency: frequency, rate: 48000) }
        try TestFiles.writeSoundFile(url.path, [samples, samples], sampleRate: 48000)
        return (url, samples)
    }

    private final class Delegate: AudioPlayerDelegate {
        let finished: XCTestExpectation
        var flags: [Bool] = []
        var when: TimeInterval = 0
        init(_ e: XCTestExpectation) { finished = e }
        func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
            flags.append(flag)
            when = player.deviceCurrentTime
            finished.fulfill()
        }
    }

    /// The file plays twice (numberOfLoops 1), bit for bit, into the sink; the delegate hears of
    /// the end once, after it; then the player is stopped at position 0.
    func testPlaysTheFileBitIdenticallyWithALoopAndTellsTheDelegate() throws {
        let (url, samples) = try toneFile(seconds: 0.5)
        let player = try AudioPlayer(contentsOf: url)
        XCTAssertEqual(player.duration, 0.5, accuracy: 1e-9)
        XCTAssertEqual(player.numberOfChannels, 2)
        let delegate = Delegate(expectation(description: "finished"))
        player.delegate = delegate
        player.numberOfLoops = 1
        let raw = server.directory.appendingPathComponent("out.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: raw)
        usleep(300_000)
        XCTAssertTrue(player.prepareToPlay())
        let started = player.deviceCurrentTime
        XCTAssertTrue(player.play())
        XCTAssertTrue(player.isPlaying)
        wait(for: [delegate.finished], timeout: 5)
        let elapsed = delegate.when - started
        usleep(300_000)
        server.stopChild(recorder)
        XCTAssertEqual(delegate.flags, [true])
        XCTAssertFalse(player.isPlaying)
        XCTAssertEqual(player.currentTime, 0)
        player.stop()
        let recorded = try PulseTestServer.readRawFloat32(raw)
        let first = try XCTUnwrap((0..<(recorded.count / 2)).first { recorded[2 * $0] != 0 }, "silent recording")
        // Frame 0 of the sine is 0: the first sound is frame 1.
        var matching = 0
        while first + matching < recorded.count / 2, matching + 1 < 48000,
              recorded[2 * (first + matching)] == samples[(matching + 1) % 24000],
              recorded[2 * (first + matching) + 1] == samples[(matching + 1) % 24000] {
            matching += 1
        }
        let after = (first + matching + 1..<min(recorded.count / 2, first + matching + 4800)).map { abs(recorded[2 * $0]) }.max() ?? 0
        print("AudioPlayer: \(matching + 1) frames bit-identical (two passes of 24000), then peak \(after); finished after \(elapsed) s")
        XCTAssertEqual(matching, 47999, "the heard sound departs from the file at frame \(matching + 1)")
        XCTAssertEqual(after, 0, "silence after the second pass")
        // One second of sound, then the output's latency; a loaded machine may add some.
        XCTAssertGreaterThan(elapsed, 0.95)
        XCTAssertLessThan(elapsed, 2.5)
    }

    /// currentTime advances with playback, freezes on pause, and setting it seeks.
    func testCurrentTimePauseAndSeek() throws {
        let (url, _) = try toneFile(seconds: 3)
        let player = try AudioPlayer(contentsOf: url)
        // The clock read around play() (which starts the engine) and each sleep: a loaded
        // machine may oversleep the test thread or start slowly.
        let before1 = player.deviceCurrentTime
        XCTAssertTrue(player.play())
        let after1 = player.deviceCurrentTime
        usleep(400_000)
        let t1 = player.currentTime, now1 = player.deviceCurrentTime
        player.pause()
        XCTAssertFalse(player.isPlaying)
        usleep(100_000)
        let t2 = player.currentTime
        usleep(300_000)
        XCTAssertEqual(player.currentTime, t2, "paused")
        player.currentTime = 2.0
        XCTAssertEqual(player.currentTime, 2.0, accuracy: 1e-9)
        let before3 = player.deviceCurrentTime
        XCTAssertTrue(player.play())
        let after3 = player.deviceCurrentTime
        usleep(300_000)
        let t3 = player.currentTime, now3 = player.deviceCurrentTime
        player.stop()
        print("AudioPlayer: currentTime \(t1) after \(now1 - after1)...\(now1 - before1) s, \(t2) paused, \(t3) \(now3 - after3) s after seeking to 2")
        XCTAssertGreaterThan(t1, now1 - after1 - 0.15)
        XCTAssertLessThan(t1, now1 - before1 + 0.15)
        XCTAssertGreaterThan(t3, 2 + now3 - after3 - 0.15)
        XCTAssertLessThan(t3, 2 + now3 - before3 + 0.15)
        XCTAssertEqual(player.currentTime, t3, accuracy: 0.05, "stop keeps the position")
    }

    /// Meters follow the volume: a 0.5 sine at volume 0.5 has RMS 20·log10(0.25/√2) = -15.05 dBFS
    /// and peak -12.04 dBFS; the heard level follows too.
    func testMetersAndVolume() throws {
        let (url, _) = try toneFile(seconds: 2)
        let player = try AudioPlayer(contentsOf: url)
        player.isMeteringEnabled = true
        player.volume = 0.5
        player.updateMeters()
        XCTAssertEqual(player.averagePower(forChannel: 0), -160)
        let raw = server.directory.appendingPathComponent("out.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: raw)
        usleep(300_000)
        XCTAssertTrue(player.play())
        usleep(500_000)
        player.updateMeters()
        let average = player.averagePower(forChannel: 0), peak = player.peakPower(forChannel: 1)
        usleep(300_000)
        player.stop()
        server.stopChild(recorder)
        print("AudioPlayer meters at volume 0.5: average \(average) dBFS, peak \(peak) dBFS")
        XCTAssertEqual(average, -15.05, accuracy: 0.1)
        XCTAssertEqual(peak, -12.04, accuracy: 0.1)
        XCTAssertEqual(player.averagePower(forChannel: 5), -160)
        let recorded = try PulseTestServer.readRawFloat32(raw)
        let left = stride(from: 0, to: recorded.count, by: 2).map { recorded[$0] }
        let loud = try XCTUnwrap(left.indices.first { abs(left[$0]) > 0.1 })
        XCTAssertGreaterThan(left.count, loud + 19200, "recorded too little")
        guard left.count > loud + 19200 else { return }
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: left[(loud + 4800)..<(loud + 19200)], sampleRate: 48000))
        XCTAssertEqual(fit.tones[0].amplitude, 0.25, accuracy: 0.001, "heard at half the amplitude")
    }

    /// With enableRate, rate 2 plays the sound twice as fast at the same pitch.
    func testRateChangesSpeedNotPitch() throws {
        let (url, _) = try toneFile(seconds: 3, frequency: 1000)
        let player = try AudioPlayer(contentsOf: url)
        player.enableRate = true
        player.rate = 2
        XCTAssertEqual(player.rate, 2)
        let raw = server.directory.appendingPathComponent("out.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: raw)
        usleep(300_000)
        // The clock read around play() (which starts the engine) and the sleep.
        let before = player.deviceCurrentTime
        XCTAssertTrue(player.play())
        let after = player.deviceCurrentTime
        usleep(500_000)
        let position = player.currentTime, now = player.deviceCurrentTime
        usleep(300_000)
        player.stop()
        server.stopChild(recorder)
        print("AudioPlayer at rate 2: position \(position) s after \(now - after)...\(now - before) s")
        XCTAssertGreaterThan(position, 2 * (now - after) - 0.25)
        XCTAssertLessThan(position, 2 * (now - before) + 0.25)
        let recorded = try PulseTestServer.readRawFloat32(raw)
        let left = stride(from: 0, to: recorded.count, by: 2).map { recorded[$0] }
        let loud = try XCTUnwrap(left.indices.first { abs(left[$0]) > 0.1 })
        XCTAssertGreaterThan(left.count, loud + 19200, "recorded too little")
        guard left.count > loud + 19200 else { return }
        // The cleanest 0.1 s window after the unit's start (a loaded machine may drop an output
        // slice; a discontinuity inside a window pulls its fitted frequency off by tens of Hz).
        let end = min(left.count, loud + 28800) - 4800
        let fit = try XCTUnwrap(stride(from: loud + 4800, through: end, by: 2400).compactMap {
            ToneFit(dominantToneOf: left[$0..<($0 + 4800)], sampleRate: 48000)
        }.filter { $0.thdPlusNoiseDB.isFinite }.min { $0.thdPlusNoiseDB < $1.thdPlusNoiseDB })
        print("AudioPlayer at rate 2: \(fit.tones[0].frequency) Hz, THD+N \(fit.thdPlusNoiseDB) dB")
        XCTAssertEqual(fit.tones[0].frequency, 1000, accuracy: 2, "the pitch is kept")
    }

    /// The playback streams the server has (a running engine holds one).
    private func playbackStreams() throws -> Int {
        try server.run("pactl", ["list", "short", "sink-inputs"]).output.split(separator: "\n").count
    }

    /// Counts the delegate's reports; fulfils its expectation at the `expected`-th.
    private final class CountingDelegate: AudioPlayerDelegate {
        let done: XCTestExpectation
        let expected: Int
        var flags: [Bool] = []
        init(_ e: XCTestExpectation, expected: Int) { done = e; self.expected = expected }
        func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
            flags.append(flag)
            if flags.count == expected { done.fulfill() }
        }
    }

    /// At the end of the sound the player stops its engine (its PulseAudio stream goes away, so
    /// an idle player holds no output); play() starts it again and the sound plays again.
    func testAnIdlePlayerReleasesItsOutputAndPlaysAgain() throws {
        let (url, _) = try toneFile(seconds: 0.3)
        let player = try AudioPlayer(contentsOf: url)
        let first = expectation(description: "first end"), second = expectation(description: "second end")
        let delegate = CountingDelegate(first, expected: 1)
        player.delegate = delegate
        XCTAssertTrue(player.play())
        XCTAssertEqual(try playbackStreams(), 1)
        wait(for: [first], timeout: 5)
        let ended = Date()
        var streams = try playbackStreams()
        while streams > 0 && Date().timeIntervalSince(ended) < 2 {
            usleep(20_000)
            streams = try playbackStreams()
        }
        print("AudioPlayer: output stream gone \(Date().timeIntervalSince(ended)) s after the end was reported")
        XCTAssertEqual(streams, 0, "the engine still holds its output after the end")
        XCTAssertFalse(player.isPlaying)
        let later = CountingDelegate(second, expected: 1)
        player.delegate = later
        XCTAssertTrue(player.play())
        XCTAssertEqual(try playbackStreams(), 1)
        wait(for: [second], timeout: 5)
        XCTAssertEqual(delegate.flags + later.flags, [true, true])
    }

    /// play() at once after the render thread reached the end (before the end is reported)
    /// plays the whole sound again from the start, and each end is reported exactly once.
    func testPlayRightAfterTheEndPlaysTheSoundAgainAndEachEndIsReportedOnce() throws {
        let (url, samples) = try toneFile(seconds: 0.25)
        let player = try AudioPlayer(contentsOf: url)
        let both = expectation(description: "two ends")
        let delegate = CountingDelegate(both, expected: 2)
        player.delegate = delegate
        let raw = server.directory.appendingPathComponent("again.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: raw)
        usleep(300_000)
        XCTAssertTrue(player.play())
        let deadline = Date().addingTimeInterval(5)
        while player.isPlaying && Date() < deadline { usleep(500) }
        XCTAssertFalse(player.isPlaying, "the sound never ended")
        let reportedBefore = delegate.flags.count
        XCTAssertEqual(player.currentTime, 0, "back at the start once the sound ended")
        XCTAssertTrue(player.play())
        wait(for: [both], timeout: 5)
        usleep(400_000)
        server.stopChild(recorder)
        let recorded = try PulseTestServer.readRawFloat32(raw)
        let sounding = stride(from: 0, to: recorded.count, by: 2).filter { recorded[$0] != 0 }.count
        print("AudioPlayer: replayed \(reportedBefore == 0 ? "before" : "after") the first report; \(sounding) frames heard of 2 × \(samples.count); reports \(delegate.flags)")
        XCTAssertEqual(delegate.flags, [true, true])
        // Each play is the whole sound (frame 0 of the sine is exactly 0; a loaded machine may
        // drop a slice of the output).
        XCTAssertGreaterThan(sounding, 2 * (samples.count - 1) - 2048)
        XCTAssertLessThanOrEqual(sounding, 2 * (samples.count - 1))
    }

    /// stop() while an end waits for the output's latency: no report (ends only, never stop()).
    func testStopDropsAnEndNotYetReported() throws {
        let (url, _) = try toneFile(seconds: 0.2)
        let player = try AudioPlayer(contentsOf: url)
        let never = expectation(description: "no report")
        never.isInverted = true
        let delegate = CountingDelegate(never, expected: 1)
        player.delegate = delegate
        XCTAssertTrue(player.play())
        let deadline = Date().addingTimeInterval(5)
        while player.isPlaying && Date() < deadline { usleep(500) }
        usleep(12_000)   // the monitor (10 ms period) has seen the end; its report waits for the latency
        player.stop()
        wait(for: [never], timeout: 0.5)
        XCTAssertEqual(delegate.flags, [])
    }
}
