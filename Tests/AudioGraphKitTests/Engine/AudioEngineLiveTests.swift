// Tests of AudioEngine playing live to a private PulseAudio server: output, live taps, input.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

final class AudioEngineLiveTests: DefaultPulseServerTestCase {
    func testStartPlaysToTheDefaultSinkBitIdenticalAndALiveTapEqualsTheRender() throws {
        let engine = AudioEngine()
        XCTAssertEqual(engine.outputNode.outputFormat(forBus: 0).sampleRate, 48000, "the null sink's rate")
        let source = makeSineSource(frequency: 1000)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        final class Collected: @unchecked Sendable {
            let lock = NSLock()
            var lengths: [Int] = []; var left: [Float] = []; var times: [Int64] = []; var onRenderThread = false
        }
        let collected = Collected()
        engine.mainMixerNode.installTap(onBus: 0, bufferSize: 4800, format: nil) { buffer, time in
            collected.lock.lock()
            defer { collected.lock.unlock() }
            collected.lengths.append(Int(buffer.frameLength))
            collected.left += UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength))
            collected.times.append(time.sampleTime)
        }
        let file = server.directory.appendingPathComponent("engine.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        usleep(300_000)
        try engine.start()
        XCTAssertTrue(engine.isRunning)
        usleep(1_500_000)
        XCTAssertNotNil(engine.mainMixerNode.lastRenderTime)
        let latency = engine.outputNode.presentationLatency
        engine.mainMixerNode.removeTap(onBus: 0)
        engine.stop()
        XCTAssertFalse(engine.isRunning)
        usleep(300_000)
        server.stopChild(recorder)

        let samples = try PulseTestServer.readRawFloat32(file)
        let recorded = samples.count / 2
        let first = try XCTUnwrap((0..<recorded).first { samples[2 * $0] != 0 }, "silent recording")
        // The recording's first sound is frame 1 of the sine (frame 0 is 0).
        var matching = 0
        while first + matching < recorded,
              samples[2 * (first + matching)] == sineSample(Int64(matching + 1), frequency: 1000, rate: 48000),
              samples[2 * (first + matching) + 1] == sineSample(Int64(matching + 1), frequency: 1000, rate: 48000) {
            matching += 1
        }
        print("engine live: \(matching) frames bit-identical to the formula; latency \(latency * 1000) ms; "
              + "tap: \(collected.lengths.count) buffers")
        XCTAssertGreaterThan(matching, 48000, "the live output departs from the formula at frame \(matching + 1)")
        XCTAssertGreaterThan(latency, 0.005, "the output reports its latency while running")

        collected.lock.lock()
        defer { collected.lock.unlock() }
        XCTAssertGreaterThan(collected.lengths.count, 10)
        XCTAssertEqual(Array(collected.lengths.dropLast()), Array(repeating: 4800, count: collected.lengths.count - 1))
        XCTAssertEqual(collected.times, (0..<collected.times.count).map { Int64($0 * 4800) })
        for n in 0..<collected.left.count {
            guard collected.left[n] == sineSample(Int64(n), frequency: 1000, rate: 48000) else {
                return XCTFail("the tap departs from the render at frame \(n)")
            }
        }
    }

    func testAnInputOnlyEngineDeliversCapturedAudioToATap() throws {
        // What plays into the null sink is captured from its monitor: the default source here.
        let engine = AudioEngine()
        engine.inputNode.setDevice(server.monitorSourceName)
        let format = engine.inputNode.outputFormat(forBus: 0)
        XCTAssertEqual(format.sampleRate, 48000)
        final class Collected: @unchecked Sendable {
            let lock = NSLock()
            var left: [Float] = []
        }
        let collected = Collected()
        engine.inputNode.installTap(onBus: 0, bufferSize: 1024, format: nil) { buffer, _ in
            collected.lock.lock()
            collected.left += UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength))
            collected.lock.unlock()
        }
        // One second of a 440 Hz tone (raw interleaved float32), played into the sink while the engine captures.
        let tone = server.directory.appendingPathComponent("tone.raw")
        let wave = (0..<48000).flatMap { n in Array(repeating: sineSample(Int64(n), frequency: 440, rate: 48000, amplitude: 0.4), count: 2) }
        try wave.withUnsafeBytes { try Data($0).write(to: tone) }
        try engine.start()
        let player = try server.startPlaying(file: tone)
        _ = player.wait(timeout: 5)
        usleep(300_000)
        engine.inputNode.removeTap(onBus: 0)
        let faults = engine.inputNode.captureFaultCount
        engine.stop()
        collected.lock.lock()
        defer { collected.lock.unlock() }
        // The loud part of what was captured: the tone, at its level.
        let loud = collected.left.indices.filter { abs(collected.left[$0]) > 0.2 }
        let start = try XCTUnwrap(loud.first), end = try XCTUnwrap(loud.last)
        XCTAssertGreaterThan(end - start, 40000, "about a second of tone was captured")
        let middle = Array(collected.left[(start + 4800)..<(end - 4800)])
        print("engine input: \(collected.left.count) frames captured, tone \(start)..<\(end), capture faults \(faults)")
        // Bit for bit: from the first non-zero frame on (frame 1 of the tone; frame 0 is 0).
        let first = try XCTUnwrap(collected.left.firstIndex { $0 != 0 })
        var matching = 0
        while first + matching < collected.left.count, matching + 1 < 48000,
              collected.left[first + matching] == sineSample(Int64(matching + 1), frequency: 440, rate: 48000, amplitude: 0.4) {
            matching += 1
        }
        XCTAssertEqual(matching, 47999, "the captured tone departs from what was played at frame \(matching + 1)")
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: middle, sampleRate: 48000))
        XCTAssertEqual(fit.tones[0].frequency, 440, accuracy: 0.1)
        XCTAssertEqual(fit.tones[0].amplitude, 0.4, accuracy: 0.001)
    }

    /// A player's `.dataPlayedBack` handler runs when the audio has been heard: a capture of the
    /// sink's monitor (5 ms latency, read every millisecond) sees the buffer's last sound arrive,
    /// and the handler runs after that sound was played and within 50 ms of it.
    func testPlayedBackArrivesAfterTheAudioWasHeardAndWithin50Milliseconds() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let capture = try PulseCaptureStream(context: context, configuration: PulseStreamConfiguration(
            device: server.monitorSourceName, latencyMilliseconds: 5, maximumFramesPerSlice: 64))
        try capture.start()
        capture.setBacklogLimit(frames: 96_000)
        final class Heard: @unchecked Sendable {
            let lock = NSLock()
            var lastSound: UInt64 = 0
            let stop = Atomic<Bool>(false)
        }
        let heard = Heard()
        let reader = Thread {
            let left = UnsafeMutablePointer<Float>.allocate(capacity: 4096), right = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
            defer { left.deallocate(); right.deallocate() }
            var pointers = [left, right]
            while !heard.stop.load(ordering: .acquiring) {
                let n = min(capture.readableFrames, 4096)
                if n > 0 {
                    let got = pointers.withUnsafeMutableBufferPointer { capture.read(frameCount: n, into: UnsafePointer($0.baseAddress!)) }
                    let now = AudioTime.currentHostTime
                    if (0..<got).contains(where: { left[$0] != 0 }) {
                        heard.lock.lock(); heard.lastSound = now; heard.lock.unlock()
                    }
                }
                usleep(1000)
            }
        }
        reader.start()

        let engine = AudioEngine()
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        let player = AudioPlayerNode()
        engine.attach(player)
        engine.connect(player, to: engine.mainMixerNode, format: format)
        let tone = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 24_000))
        tone.frameLength = 24_000
        for i in 0..<24_000 {
            tone.floatChannelData![0][i] = sineSample(Int64(i + 1), frequency: 1000, rate: 48000)
            tone.floatChannelData![1][i] = tone.floatChannelData![0][i]
        }
        let handlerTime = Atomic<UInt64>(0)
        try engine.start()
        usleep(300_000)
        player.scheduleBuffer(tone, completionCallbackType: .dataPlayedBack) { _ in
            handlerTime.store(AudioTime.currentHostTime, ordering: .relaxed)
        }
        player.play()
        let deadline = Date().addingTimeInterval(3)
        while handlerTime.load(ordering: .relaxed) == 0 && Date() < deadline { usleep(1000) }
        usleep(300_000)
        heard.stop.store(true, ordering: .releasing)
        engine.stop()
        capture.stop()
        let handler = handlerTime.load(ordering: .relaxed)
        heard.lock.lock()
        let lastSound = heard.lastSound
        heard.lock.unlock()
        XCTAssertNotEqual(handler, 0, "the played-back handler never ran")
        XCTAssertNotEqual(lastSound, 0, "nothing was heard")
        // The capture hands over sound at most ~5 ms (its latency) plus a 1 ms poll after it was played.
        let captureDelay = 0.010
        let afterHeard = Double(Int64(handler) - Int64(lastSound)) / 1e9 + captureDelay
        print(String(format: "played-back handler %.1f ms after the last sound was heard (capture delay allowed: %.0f ms)",
                     afterHeard * 1000, captureDelay * 1000))
        XCTAssertGreaterThanOrEqual(afterHeard, 0, "the handler ran before the audio was heard")
        XCTAssertLessThanOrEqual(afterHeard, 0.050, "the handler ran more than 50 ms after the audio was heard")
    }

    /// When the server (and so the output device) goes away while the engine runs, the engine
    /// posts AudioEngineConfigurationChange, as AVAudioEngine does when its device disappears.
    func testAConfigurationChangeIsPostedWhenTheDeviceDisappears() throws {
        let engine = AudioEngine()
        let source = makeSineSource(frequency: 440)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        let posted = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(forName: .AudioEngineConfigurationChange, object: engine,
                                                              queue: nil) { _ in posted.signal() }
        defer { NotificationCenter.default.removeObserver(observer) }
        try engine.start()
        usleep(200_000)
        server.kill()
        XCTAssertEqual(posted.wait(timeout: .now() + 3), .success, "no AudioEngineConfigurationChange within 3 s")
        engine.stop()
        XCTAssertFalse(engine.isRunning)
        XCTAssertThrowsError(try engine.start(), "no server: start throws") { error in
            XCTAssertTrue("\(error)".hasPrefix("start(): "), "\(error)")
        }
    }

    /// A server that stops answering (SIGSTOP) while an engine plays and captures is detected:
    /// AudioEngineConfigurationChange is posted within 2 s + 1 s (no request or timing update
    /// for 2 s), and `stop()` then returns at once.
    func testAConfigurationChangeIsPostedWhenTheServerStopsAnswering() throws {
        for capturing in [false, true] {
            let engine = AudioEngine()
            let source = makeSineSource(frequency: 440)
            engine.attach(source)
            engine.connect(source, to: engine.mainMixerNode, format: nil)
            if capturing {
                engine.inputNode.setDevice(server.monitorSourceName)
                engine.inputNode.installTap(onBus: 0, bufferSize: 4800, format: nil) { _, _ in }
            }
            let posted = DispatchSemaphore(value: 0)
            let observer = NotificationCenter.default.addObserver(forName: .AudioEngineConfigurationChange, object: engine,
                                                                  queue: nil) { _ in posted.signal() }
            defer { NotificationCenter.default.removeObserver(observer) }
            try engine.start()
            usleep(300_000)
            let pid = try XCTUnwrap(server.processIdentifier)
            kill(pid, SIGSTOP)
            let stoppedAt = Date()
            let result = posted.wait(timeout: .now() + 3)
            let detected = Date().timeIntervalSince(stoppedAt)
            if capturing { engine.inputNode.removeTap(onBus: 0) }
            engine.stop()
            let stopped = Date().timeIntervalSince(stoppedAt)
            kill(pid, SIGCONT)
            print(String(format: "frozen server (capturing: %@): notified after %.2f s, stopped after %.2f s", "\(capturing)", detected, stopped))
            XCTAssertEqual(result, .success, "no AudioEngineConfigurationChange within 3 s (capturing: \(capturing))")
            XCTAssertGreaterThanOrEqual(detected, 1.9, "detected before 2 s of silence")
            XCTAssertLessThan(stopped - detected, 1.5, "stop() waited on the frozen server")
            usleep(300_000)
        }
    }

    /// The input node's channel map picks a source channel: with `[1]` the tap receives the
    /// right channel of what was played, alone, bit for bit.
    func testTheInputChannelMapPicksOneSourceChannel() throws {
        let engine = AudioEngine()
        engine.inputNode.setDevice(server.monitorSourceName)
        engine.inputNode.channelMap = [1]
        XCTAssertEqual(engine.inputNode.outputFormat(forBus: 0).channelCount, 1)
        final class Collected: @unchecked Sendable {
            let lock = NSLock()
            var samples: [Float] = []
            var channels = 0
        }
        let collected = Collected()
        engine.inputNode.installTap(onBus: 0, bufferSize: 1024, format: nil) { buffer, _ in
            collected.lock.lock()
            collected.channels = Int(buffer.format.channelCount)
            collected.samples += UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength))
            collected.lock.unlock()
        }
        // 440 Hz on the left, 1000 Hz on the right (raw interleaved float32 at the sink's format).
        let tone = server.directory.appendingPathComponent("lr.raw")
        var wave = [Float](repeating: 0, count: 2 * 24000)
        for n in 0..<24000 {
            wave[2 * n] = sineSample(Int64(n), frequency: 440, rate: 48000, amplitude: 0.4)
            wave[2 * n + 1] = sineSample(Int64(n), frequency: 1000, rate: 48000, amplitude: 0.3)
        }
        try wave.withUnsafeBytes { try Data($0).write(to: tone) }
        try engine.start()
        let player = try server.startPlaying(file: tone)
        _ = player.wait(timeout: 5)
        usleep(300_000)
        engine.inputNode.removeTap(onBus: 0)
        engine.stop()
        collected.lock.lock()
        defer { collected.lock.unlock() }
        XCTAssertEqual(collected.channels, 1)
        let first = try XCTUnwrap(collected.samples.firstIndex { $0 != 0 })
        var matching = 0
        while first + matching < collected.samples.count, matching + 1 < 24000,
              collected.samples[first + matching] == sineSample(Int64(matching + 1), frequency: 1000, rate: 48000, amplitude: 0.3) {
            matching += 1
        }
        XCTAssertEqual(matching, 23999, "the mapped channel departs from the right channel at frame \(matching + 1)")
    }
}

