// Tests of AudioPlayerNode through the engine API in offline manual rendering: scheduling, files, handlers, times.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

#if canImport(Glibc)
import Glibc
#endif

final class AudioPlayerNodeTests: XCTestCase {
    let stereo48 = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!

    /// An offline manual engine with a player connected to the main mixer in `format`.
    private func playerEngine(format: AudioFormat? = nil, maximum: AudioFrameCount = 4096) throws -> (AudioEngine, AudioPlayerNode) {
        let engine = try makeManualEngine(format: stereo48, maximum: maximum)
        let player = AudioPlayerNode()
        engine.attach(player)
        engine.connect(player, to: engine.mainMixerNode, format: format ?? stereo48)
        return (engine, player)
    }

    /// A float buffer whose sample at channel c, frame i is `value(c, i)`.
    private func buffer(frames: Int, _ value: (Int, Int) -> Float) throws -> AudioPCMBuffer {
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: stereo48, frameCapacity: AudioFrameCount(frames)))
        b.frameLength = AudioFrameCount(frames)
        for c in 0..<2 { for i in 0..<frames { b.floatChannelData![c][i] = value(c, i) } }
        return b
    }

    private func samples(_ b: AudioPCMBuffer, _ c: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: b.floatChannelData![c], count: Int(b.frameLength)))
    }

    /// Buffers scheduled before `start()`: one at player time 250 (an AudioTime sample time),
    /// two more after it (`at: nil`); the main mixer output is the buffers end to end, exactly.
    func testBuffersPlayBackToBackThroughTheMainMixerExactly() throws {
        let (engine, player) = try playerEngine()
        let a = try buffer(frames: 1200) { c, i in Float(i % 100) / 200 * (c == 0 ? 1 : -1) + 0.001 }
        let b = try buffer(frames: 333) { c, i in 0.25 + Float(i) / 10000 * (c == 0 ? 1 : -1) }
        let c = try buffer(frames: 900) { _, i in -0.3 + Float(i % 7) / 100 }
        player.scheduleBuffer(a, at: AudioTime(sampleTime: 250, atRate: 48000), options: [])
        player.scheduleBuffer(b)
        player.scheduleBuffer(c, completionHandler: nil)
        XCTAssertFalse(player.isPlaying)
        try engine.start()
        player.play()
        XCTAssertTrue(player.isPlaying)
        let out = try render(engine, frames: 3000, piece: 700)
        for ch in 0..<2 {
            let expected = [Float](repeating: 0, count: 250) + samples(a, ch) + samples(b, ch) + samples(c, ch)
                + [Float](repeating: 0, count: 3000 - 250 - 2433)
            XCTAssertEqual(out[ch], expected, "channel \(ch)")
        }
    }

    /// An int16 buffer is converted (x / 32768) when scheduled.
    func testAnInt16BufferIsConverted() throws {
        let (engine, player) = try playerEngine()
        let int16 = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 2, interleaved: true))
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: int16, frameCapacity: 100))
        b.frameLength = 100
        for i in 0..<100 { for c in 0..<2 { b.int16ChannelData![0][2 * i + c] = Int16(i * 300 - 15000) * (c == 0 ? 1 : -1) } }
        player.scheduleBuffer(b)
        try engine.start()
        player.play()
        let out = try render(engine, frames: 200)
        for i in 0..<100 {
            XCTAssertEqual(out[0][i], Float(i * 300 - 15000) / 32768)
            XCTAssertEqual(out[1][i], -Float(i * 300 - 15000) / 32768)
        }
        XCTAssertTrue(out[0][100...].allSatisfy { $0 == 0 })
    }

    /// A file (AudioFile) and a segment of it, streamed through small disk buffers and prepared
    /// before each offline render: the output equals the samples written.
    func testFileAndSegmentEqualTheWrittenSamples() throws {
        let saved = ScheduledSoundPlayerNode.streamingRingFrames
        ScheduledSoundPlayerNode.streamingRingFrames = 1 << 15
        defer { ScheduledSoundPlayerNode.streamingRingFrames = saved }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("player-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: url) }
        let frames = 90_000
        var written = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 2)
        for c in 0..<2 {
            for i in 0..<frames { written[c][i] = Float(sin(Double(i) * 0.01 * Double(c + 1)) * 0.5) }
        }
        do {
            let storage = ChannelBufferStorage(channelCount: 2, capacity: frames)
            for c in 0..<2 { for i in 0..<frames { storage.list.channel(c)[i] = written[c][i] } }
            let w = try AudioFileWriter(path: url.path, format: StreamFormat(sampleRate: 48000, channelCount: 2))
            try w.write(storage.list, frameCount: frames)
            try w.close()
        }
        let (engine, player) = try playerEngine()
        let file = try AudioFile(forReading: url)
        let done = Mutex<[String]>([])
        player.scheduleFile(file, at: nil) { done.withLock { $0.append("file") } }
        player.scheduleSegment(file, startingFrame: 1000, frameCount: 5000, at: nil, completionCallbackType: .dataRendered) { type in
            done.withLock { $0.append("segment \(type)") }
        }
        try engine.start()
        player.play()
        let out = try render(engine, frames: frames + 6000, piece: 4096)
        for c in 0..<2 {
            let expected = written[c] + written[c][1000..<6000] + [Float](repeating: 0, count: 1000)
            XCTAssertTrue(out[c] == expected, "channel \(c) differs from the file")
        }
        let deadline = Date().addingTimeInterval(2)
        while done.withLock({ $0.count }) < 2 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(done.withLock { $0 }, ["file", "segment dataRendered"])
    }

    /// Handlers run off the rendering thread with their callback type; `engine.stop()` stops the
    /// player and runs the pending handlers; player times convert while playing.
    func testHandlersTimesAndEngineStop() throws {
        let (engine, player) = try playerEngine()
        let log = Mutex<[(AudioPlayerNodeCompletionCallbackType, UInt)]>([])
        let a = try buffer(frames: 500) { _, _ in 0.5 }
        player.scheduleBuffer(a, completionCallbackType: .dataPlayedBack) { type in log.withLock { $0.append((type, UInt(pthread_self()))) } }
        player.scheduleBuffer(a, at: AudioTime(sampleTime: 10_000, atRate: 48000), options: .loops,
                              completionCallbackType: .dataConsumed) { type in log.withLock { $0.append((type, UInt(pthread_self()))) } }
        try engine.start()
        XCTAssertNil(player.playerTime(forNodeTime: AudioTime(sampleTime: 0, atRate: 48000)), "not playing")
        player.play(at: AudioTime(sampleTime: 100, atRate: 48000))
        _ = try render(engine, frames: 2000)
        XCTAssertEqual(player.playerTime(forNodeTime: AudioTime(sampleTime: 1100, atRate: 48000))?.sampleTime, 1000)
        XCTAssertEqual(player.nodeTime(forPlayerTime: AudioTime(sampleTime: 0, atRate: 48000))?.sampleTime, 100)
        let deadline = Date().addingTimeInterval(2)
        while log.withLock({ $0.count }) < 1 && Date() < deadline { usleep(1000) }
        let first = log.withLock { $0 }
        XCTAssertEqual(first.map(\.0), [.dataPlayedBack])
        XCTAssertNotEqual(first.first?.1, UInt(pthread_self()), "a handler ran on the rendering thread")
        engine.stop()
        XCTAssertFalse(player.isPlaying)
        XCTAssertEqual(log.withLock { $0.map(\.0) }, [.dataPlayedBack, .dataConsumed], "stop() runs the pending handler")
        XCTAssertEqual(log.withLock { $0.last?.1 }, UInt(pthread_self()), "stop() runs it on the calling thread")
    }

    /// Reconnecting the player in another format before `start()` replaces its engine node: the
    /// buffers scheduled in the old format are dropped (their handlers run) and the player plays
    /// in the new one.
    func testAFormatChangeDropsTheOldScheduleAndPlaysInTheNewFormat() throws {
        let (engine, player) = try playerEngine()
        let dropped = Mutex<Int>(0)
        player.scheduleBuffer(try buffer(frames: 100) { _, _ in 0.5 }) { dropped.withLock { $0 += 1 } }
        let mono = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!
        engine.disconnectNodeOutput(player)
        engine.connect(player, to: engine.mainMixerNode, format: mono)
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: mono, frameCapacity: 100))
        b.frameLength = 100
        for i in 0..<100 { b.floatChannelData![0][i] = 0.25 }
        player.scheduleBuffer(b)
        XCTAssertEqual(dropped.withLock { $0 }, 1, "the buffer of the old format was not dropped")
        try engine.start()
        player.play()
        let out = try render(engine, frames: 200)
        // A mono input of the main mixer is panned equal-power: 0.25 × cos(π/4) on each side.
        XCTAssertEqual(Double(out[0][50]), 0.25 * 0.5.squareRoot(), accuracy: 1e-6)
        XCTAssertEqual(Double(out[1][50]), 0.25 * 0.5.squareRoot(), accuracy: 1e-6)
        XCTAssertEqual(out[0][150], 0)
    }

    // MARK: Programmer errors (Apple raises): one line, then the program stops

    func testAMonoBufferOnAStereoPlayerStops() throws {
        try assertEngineStops("AudioPlayerNodeTests/testAMonoBufferOnAStereoPlayerStops",
                        expected: ["scheduleBuffer(_:at:options:completionHandler:)", "AudioPlayerNode", "1 channels, the player 2"]) {
            let (engine, player) = try playerEngine()
            let mono = try XCTUnwrap(AudioPCMBuffer(pcmFormat: AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!, frameCapacity: 10))
            withExtendedLifetime(engine) { player.scheduleBuffer(mono) }
        }
    }

    /// A file at another rate is converted (AudioPlayerNodeRateConversionTests); another
    /// channel count is a programmer error, as on Apple's platforms.
    func testAFileWithAnotherChannelCountStops() throws {
        try assertEngineStops("AudioPlayerNodeTests/testAFileWithAnotherChannelCountStops",
                        expected: ["scheduleFile(_:at:completionHandler:)", "AudioPlayerNode", "48000 Hz, 1 ch does not match the player's format (48000 Hz, 2 ch)"]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("player-mono-\(getpid()).wav")
            let w = try AudioFileWriter(path: url.path, format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try w.write(ChannelBufferStorage(channelCount: 1, capacity: 100).list, frameCount: 100)
            try w.close()
            let (engine, player) = try playerEngine()
            let file = try AudioFile(forReading: url)
            withExtendedLifetime(engine) { player.scheduleFile(file, at: nil) }
        }
    }

    func testSchedulingOnAPlayerThatIsNotAttachedStops() throws {
        try assertEngineStops("AudioPlayerNodeTests/testSchedulingOnAPlayerThatIsNotAttachedStops",
                        expected: ["scheduleBuffer(_:at:options:completionHandler:)", "AudioPlayerNode", "not attached"]) {
            AudioPlayerNode().scheduleBuffer(try buffer(frames: 10) { _, _ in 0 })
        }
    }

    /// Behind a varispeed or a timePitch at rate 2, `playerTime(forNodeTime: lastRenderTime)`
    /// follows the frames the player rendered: two seconds per second of engine time, reaching
    /// the buffer's end (1 s) after 0.5 s; `lastRenderTime` stays the engine's timeline. Before,
    /// it advanced one second per second and never reached the end (the Kodeco progress bar).
    func testPlayerTimeFollowsTheFramesRenderedThroughARateTwoUnit() throws {
        for unit in [AudioUnitVarispeed() as AudioNode, AudioUnitTimePitch()] {
            let engine = try makeManualEngine(maximum: 1200)
            let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
            let player = AudioPlayerNode()
            engine.attach(player)
            engine.attach(unit)
            if let v = unit as? AudioUnitVarispeed { v.rate = 2 }
            if let t = unit as? AudioUnitTimePitch { t.rate = 2 }
            engine.connect(player, to: unit, format: format)
            engine.connect(unit, to: engine.mainMixerNode, format: format)
            let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 48_000))
            buffer.frameLength = 48_000
            try engine.start()
            player.scheduleBuffer(buffer, completionHandler: nil)
            player.play()
            var positions: [Double] = []
            for step in 1...4 {
                _ = try render(engine, frames: 6000, piece: 1200)  // 0.125 s of engine time
                let node = try XCTUnwrap(player.lastRenderTime)
                XCTAssertEqual(node.sampleTime, Int64(6000 * step), "lastRenderTime is the engine's timeline")
                let time = try XCTUnwrap(player.playerTime(forNodeTime: node))
                positions.append(Double(time.sampleTime) / 48000)
                // And back: the node time of that player time is the engine's time again.
                let back = try XCTUnwrap(player.nodeTime(forPlayerTime: time))
                XCTAssertEqual(Double(back.sampleTime), Double(node.sampleTime), accuracy: 2400, "\(unit)")
            }
            engine.stop()
            print("player time behind \(type(of: unit)) at rate 2: \(positions.map { String(format: "%.3f", $0) }) s")
            // 0.25 s per step (two seconds per second): exact to a slice behind a varispeed; behind a
            // timePitch within 60 ms (its start delay, subtracted, is rubberband's estimate; measured 50 ms).
            let accuracy = unit is AudioUnitVarispeed ? 0.01 : 0.06
            for (k, p) in positions.enumerated() {
                XCTAssertEqual(p, 0.25 * Double(k + 1), accuracy: accuracy, "\(unit), step \(k)")
            }
            XCTAssertGreaterThanOrEqual(positions[3], 0.95, "\(unit): the player time reaches the buffer's end")
        }
    }
}

/// Runtime conditions a player meets are counted, not fatal (issue 18): an unreadable file, too many regions.
final class AudioPlayerNodeFaultTests: XCTestCase {
    let stereo48 = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!

    func testAFileThatCannotBeReadIsCountedAndItsHandlerRuns() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("player-gone-\(getpid()).wav")
        let w = try AudioFileWriter(path: url.path, format: StreamFormat(sampleRate: 48000, channelCount: 2))
        try w.write(ChannelBufferStorage(channelCount: 2, capacity: 100).list, frameCount: 100)
        try w.close()
        let engine = try makeManualEngine(format: stereo48)
        let player = AudioPlayerNode()
        engine.attach(player)
        engine.connect(player, to: engine.mainMixerNode, format: stereo48)
        let file = try AudioFile(forReading: url)
        try FileManager.default.removeItem(at: url)
        let ran = expectation(description: "the refused schedule's handler runs")
        player.scheduleFile(file, at: nil) { ran.fulfill() }
        wait(for: [ran], timeout: 5)
        XCTAssertEqual(player.scheduleFaultCount, 1)
        XCTAssertTrue(player.lastScheduleFault?.contains(url.path) == true, "\(player.lastScheduleFault ?? "nil")")
    }

    func testMoreRegionsThanThePlayerHoldsAreCountedNotFatal() throws {
        let engine = try makeManualEngine(format: stereo48)
        let player = AudioPlayerNode()
        engine.attach(player)
        engine.connect(player, to: engine.mainMixerNode, format: stereo48)
        let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: stereo48, frameCapacity: 16))
        b.frameLength = 16
        // The player holds 256 regions waiting (ScheduledSoundPlayerNode.maximumScheduledRegions).
        for _ in 0..<256 { player.scheduleBuffer(b) }
        XCTAssertEqual(player.scheduleFaultCount, 0)
        player.scheduleBuffer(b)
        player.scheduleBuffer(b)
        XCTAssertEqual(player.scheduleFaultCount, 2)
        XCTAssertTrue(player.lastScheduleFault?.contains("more than 256") == true, "\(player.lastScheduleFault ?? "nil")")
    }
}

/// Files at another rate than the player's are converted when scheduled (as Apple's player does).
final class AudioPlayerNodeRateConversionTests: XCTestCase {
    /// A 44.1 kHz file of a 1 kHz sine at 0.5 scheduled on a 48 kHz player: the output is the
    /// same sine sampled at 48 kHz (time-aligned), exactly round(44100 × 48/44.1) = 48000 frames
    /// long, then silence; a segment (0.1 s in, 0.5 s long) likewise, with its phase.
    func testA44100HzFileIsConvertedTo48000Hz() throws {
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        let engine = try makeManualEngine(format: format)
        let player = AudioPlayerNode()
        engine.attach(player)
        engine.connect(player, to: engine.mainMixerNode, format: format)
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("tone44k.wav").path
        let tone = (0..<44100).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 44100)) }
        try TestFiles.writeSoundFile(path, [tone, tone], sampleRate: 44100)
        let file = try AudioFile(forReading: URL(fileURLWithPath: path))
        let consumed = Atomic<Int>(0)
        player.scheduleFile(file, at: nil) { consumed.add(1, ordering: .relaxed) }
        player.scheduleSegment(file, startingFrame: 4410, frameCount: 22050, at: AudioTime(sampleTime: 60000, atRate: 48000))
        XCTAssertEqual(file.framePosition, 0, "the application's file is not moved")
        try engine.start()
        player.play()
        let out = try render(engine, frames: 90000, piece: 1000)
        let whole = Array(out[0][0..<48000])
        // Away from the ends (the converter's filter sees the file's edges there).
        let e = SignalMeasurement.worstError(Array(whole[200..<47800])) { i in
            0.5 * sin(2 * Double.pi * 1000 * Double(i + 200) / 48000)
        }
        print("AudioPlayerNode 44.1 -> 48 kHz: worst error \(e.error) at \(e.at + 200); last loud frame \(out[0].lastIndex { abs($0) > 1e-3 } ?? -1)")
        XCTAssertLessThan(e.error, 1e-4)
        XCTAssertTrue(out[0][48000..<60000].allSatisfy { abs($0) < 1e-3 }, "the file plays 48000 frames")
        XCTAssertGreaterThan(out[0][47990..<48000].map { abs($0) }.max()!, 0.05, "the file plays to frame 48000")
        // The segment: file time 0.1 s ... 0.6 s at player frames 60000 ..< 84000.
        let s = SignalMeasurement.worstError(Array(out[0][60200..<83800])) { i in
            0.5 * sin(2 * Double.pi * 1000 * (0.1 + Double(i + 200) / 48000))
        }
        XCTAssertLessThan(s.error, 1e-4, "segment at \(s.at)")
        XCTAssertTrue(out[0][84000..<90000].allSatisfy { abs($0) < 1e-3 })
        XCTAssertEqual(out[0], out[1])
        engine.stop()
        XCTAssertEqual(consumed.load(ordering: .relaxed), 1)
    }
}
