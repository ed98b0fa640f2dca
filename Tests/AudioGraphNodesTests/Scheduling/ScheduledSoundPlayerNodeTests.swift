// Tests of the scheduled sound player: gapless sample-exact scheduling, loops and interruptions, files, handlers, timelines.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphNodes

#if canImport(Glibc)
import Glibc
#endif

/// A buffer whose sample at channel c, frame i is `value(c, i)`.
private func makeBuffer(channels: Int = 2, frames: Int, _ value: (Int, Int) -> Float) -> ChannelBufferStorage {
    let s = ChannelBufferStorage(channelCount: channels, capacity: frames)
    for c in 0..<channels { for i in 0..<frames { s.list.channel(c)[i] = value(c, i) } }
    return s
}

/// A recognisable signal: distinct per buffer (`tag`), channel and frame, never zero.
private func signal(_ tag: Int) -> (Int, Int) -> Float {
    { c, i in Float(tag) + Float(i % 997 + 1) / 1000 * (c == 0 ? 1 : -1) }
}

/// Collects what completion handlers saw (any thread).
private final class HandlerLog: Sendable {
    struct Entry: Sendable {
        let name: String
        let type: ScheduledCompletionCallbackType
        let hostTime: UInt64
        let thread: UInt
    }
    private let entries = Mutex<[Entry]>([])

    func handler(_ name: String) -> @Sendable (ScheduledCompletionCallbackType) -> Void {
        { type in
            self.entries.withLock {
                $0.append(Entry(name: name, type: type, hostTime: ScheduledPlayerShared.hostTimeNow(), thread: UInt(pthread_self())))
            }
        }
    }
    var all: [Entry] { entries.withLock { $0 } }
    var names: [String] { all.map(\.name) }

    /// Waits up to `timeout` seconds until `count` handlers ran.
    func wait(for count: Int, timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while all.count < count && Date() < deadline { usleep(1000) }
        return all.count >= count
    }
}

final class ScheduledSoundPlayerNodeTests: XCTestCase {
    private let format = StreamFormat.canonical(sampleRate: 48000, channelCount: 2)

    private func playerGraph(slice: Int = 512) throws -> (AudioGraph, ScheduledSoundPlayerNode) {
        let player = ScheduledSoundPlayerNode(id: "p", format: format)
        let g = try startedGraph([player], "p -> out", slice: slice)
        return (g, player)
    }

    /// The reference: `total` frames of silence with each buffer's frames laid at its start.
    private func reference(total: Int, _ placed: [(start: Int, buffer: ChannelBufferStorage, frames: Int)]) -> [[Float]] {
        var out = [[Float]](repeating: [Float](repeating: 0, count: total), count: 2)
        for p in placed {
            for c in 0..<2 {
                for i in 0..<p.frames where p.start + i < total { out[c][p.start + i] = p.buffer.list.channel(c)[i] }
            }
        }
        return out
    }

    private func firstDifference(_ a: [[Float]], _ b: [[Float]]) -> String? {
        for c in 0..<min(a.count, b.count) {
            for i in 0..<min(a[c].count, b[c].count) where a[c][i] != b[c][i] {
                return "channel \(c) frame \(i): got \(a[c][i]), expected \(b[c][i])"
            }
            if a[c].count != b[c].count { return "lengths differ" }
        }
        return nil
    }

    // MARK: Gapless, sample-exact

    /// Three buffers back to back (`at: nil`), the first at player frame 100 (inside the first
    /// slice): the output is the buffers laid end to end, exactly, for slices of 1, 64, 512 and
    /// an irregular pattern — and the same for all of them.
    func testBackToBackBuffersAreGaplessAndSampleExactAtEverySliceSize() throws {
        let a = makeBuffer(frames: 1000, signal(1)), b = makeBuffer(frames: 777, signal(2)), c = makeBuffer(frames: 1500, signal(3))
        let total = 4000
        let expected = reference(total: total, [(100, a, 1000), (1100, b, 777), (1877, c, 1500)])
        var outputs: [[[Float]]] = []
        for pattern in [[1], [64], [512], [37, 200, 1, 511]] {
            let (g, player) = try playerGraph()
            try player.scheduleBuffer(a, at: 100)
            try player.scheduleBuffer(b)
            try player.scheduleBuffer(c)
            player.play()
            let out = renderFrames(g, frames: total, channels: 2, slices: pattern)
            XCTAssertNil(firstDifference(out, expected), "slices \(pattern)")
            outputs.append(out)
            g.stop()
        }
        for o in outputs.dropFirst() { XCTAssertNil(firstDifference(o, outputs[0]), "output depends on the slice size") }
    }

    /// `play(atSampleTime: 300)` starts the player timeline inside a slice; a buffer at player
    /// time 50 starts at node frame 350; conversions agree once playing.
    func testPlayAtNodeTimeAndBufferAtPlayerTimeStartInsideSlices() throws {
        let (g, player) = try playerGraph()
        let a = makeBuffer(frames: 600, signal(4))
        try player.scheduleBuffer(a, at: 50)
        XCTAssertNil(player.playerTime(forNodeTime: 0), "not playing: no conversion")
        player.play(atSampleTime: 300)
        XCTAssertTrue(player.isPlaying)
        let out = renderFrames(g, frames: 1536, channels: 2, slices: [512])
        XCTAssertNil(firstDifference(out, reference(total: 1536, [(350, a, 600)])))
        XCTAssertEqual(player.playerTime(forNodeTime: 300), 0)
        XCTAssertEqual(player.playerTime(forNodeTime: 1000), 700)
        XCTAssertEqual(player.nodeTime(forPlayerTime: 50), 350)
    }

    // MARK: Loops and interruptions

    /// A 100-frame looping buffer from player time 0, interrupted by a buffer scheduled with
    /// `.interrupts` at player time 1234: the loop plays exactly up to 1233, the new buffer from
    /// 1234; the loop's handler runs once. The same at slices of 1 and 64.
    func testLoopInterruptedAtAnExactFrame() throws {
        let loop = makeBuffer(frames: 100, signal(5)), next = makeBuffer(frames: 300, signal(6))
        var outputs: [[[Float]]] = []
        for slice in [1, 64, 512] {
            let (g, player) = try playerGraph()
            let log = HandlerLog()
            try player.scheduleBuffer(loop, options: .loops, completion: log.handler("loop"))
            player.play()
            var out = renderFrames(g, frames: 1050, channels: 2, slices: [slice])
            try player.scheduleBuffer(next, at: 1234, options: .interrupts, completion: log.handler("next"))
            let rest = renderFrames(g, frames: 2000 - 1050, channels: 2, slices: [slice])
            for ch in 0..<2 { out[ch] += rest[ch] }
            var expected = reference(total: 2000, [(1234, next, 300)])
            for ch in 0..<2 { for i in 0..<1234 { expected[ch][i] = loop.list.channel(ch)[i % 100] } }
            XCTAssertNil(firstDifference(out, expected), "slice \(slice)")
            XCTAssertTrue(log.wait(for: 2))
            XCTAssertEqual(log.names, ["loop", "next"])
            outputs.append(out)
            g.stop()
        }
        for o in outputs.dropFirst() { XCTAssertNil(firstDifference(o, outputs[0])) }
    }

    /// `.interruptsAtLoop` scheduled at player time 1050 while a 100-frame buffer loops: the loop
    /// finishes its pass (to 1099), the new buffer starts at 1100. A buffer queued behind the
    /// loop (`at: nil`, which waits for a loop's end) is dropped and its handler runs.
    func testInterruptsAtLoopWaitsForTheLoopPoint() throws {
        let loop = makeBuffer(frames: 100, signal(7)), next = makeBuffer(frames: 250, signal(8)), queued = makeBuffer(frames: 50, signal(9))
        var outputs: [[[Float]]] = []
        for slice in [1, 64, 512] {
            let (g, player) = try playerGraph()
            let log = HandlerLog()
            try player.scheduleBuffer(loop, options: .loops, completion: log.handler("loop"))
            try player.scheduleBuffer(queued, completion: log.handler("queued"))
            player.play()
            var out = renderFrames(g, frames: 1050, channels: 2, slices: [slice])
            XCTAssertEqual(log.all.count, 0, "nothing has finished yet")
            try player.scheduleBuffer(next, options: .interruptsAtLoop, completion: log.handler("next"))
            let rest = renderFrames(g, frames: 1500 - 1050, channels: 2, slices: [slice])
            for ch in 0..<2 { out[ch] += rest[ch] }
            var expected = reference(total: 1500, [(1100, next, 250)])
            for ch in 0..<2 { for i in 0..<1100 { expected[ch][i] = loop.list.channel(ch)[i % 100] } }
            XCTAssertNil(firstDifference(out, expected), "slice \(slice)")
            XCTAssertTrue(log.wait(for: 3))
            XCTAssertEqual(log.names, ["queued", "loop", "next"], "the queued buffer is dropped at once, the loop ends at 1100")
            outputs.append(out)
            g.stop()
        }
        for o in outputs.dropFirst() { XCTAssertNil(firstDifference(o, outputs[0])) }
    }

    // MARK: Files

    /// A whole file and then a segment of it, scheduled back to back through 32 768-frame disk
    /// rings (the file is longer, so the disk threads refill them while rendering): the output is
    /// the samples written with AudioFileWriter, frame for frame.
    func testFileAndSegmentPlayTheFileSamplesExactly() throws {
        let saved = ScheduledSoundPlayerNode.streamingRingFrames
        ScheduledSoundPlayerNode.streamingRingFrames = 1 << 15
        defer { ScheduledSoundPlayerNode.streamingRingFrames = saved }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("source.wav").path
        let frames = 100_000
        var rng = SystemRandomNumberGenerator()
        let written = (0..<2).map { _ in (0..<frames).map { _ in Float.random(in: -1...1, using: &rng) } }
        try TestFiles.writeSoundFile(path, written, sampleRate: 48000)

        for pattern in [[512], [333, 64, 1]] {
            let (g, player) = try playerGraph()
            let log = HandlerLog()
            try player.scheduleFile(path: path, at: 10, completion: log.handler("file"))
            try player.scheduleSegment(path: path, startingFrame: 12_345, frameCount: 20_000, completion: log.handler("segment"))
            player.play()
            let total = 10 + frames + 20_000 + 100
            var out = [[Float]](repeating: [], count: 2)
            var done = 0, k = 0
            while done < total {
                let n = min(pattern[k % pattern.count], total - done)
                k += 1
                player.prepareForOfflineRender()
                let r = g.render(frameCount: n)!
                for c in 0..<2 { out[c] += UnsafeBufferPointer(start: r.buffer.channel(c), count: n) }
                done += n
            }
            for c in 0..<2 {
                let expected = [Float](repeating: 0, count: 10) + written[c] + written[c][12_345..<32_345] + [Float](repeating: 0, count: 100)
                XCTAssertEqual(out[c].count, expected.count)
                let bad = zip(out[c], expected).enumerated().first { $0.element.0 != $0.element.1 }
                XCTAssertNil(bad, "pattern \(pattern) channel \(c): first difference at frame \(bad?.offset ?? -1)")
            }
            XCTAssertEqual(player.streamStarvedFrames, 0)
            XCTAssertTrue(log.wait(for: 2))
            XCTAssertEqual(log.names, ["file", "segment"])
            g.stop()
        }
    }

    /// Files at another rate or channel count, and segments outside the file, are refused with
    /// one line naming the file; nothing is scheduled.
    func testFilesThatDoNotMatchThePlayerAreRefused() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path44 = dir.appendingPathComponent("a44.wav").path
        try TestFiles.writeSoundFile(path44, [[Float](repeating: 0.5, count: 100), [Float](repeating: 0.5, count: 100)], sampleRate: 44100)
        let mono = dir.appendingPathComponent("mono.wav").path
        try TestFiles.writeSoundFile(mono, [[Float](repeating: 0.5, count: 100)], sampleRate: 48000)
        let player = ScheduledSoundPlayerNode(id: "p", format: format)
        XCTAssertThrowsError(try player.scheduleFile(path: path44)) { error in
            XCTAssertEqual((error as? ScheduledSoundPlayerError)?.description,
                           "\(path44): 44100 Hz, 2 ch does not match the player's format (48000 Hz, 2 ch)")
        }
        XCTAssertThrowsError(try player.scheduleFile(path: mono)) { error in
            guard case .fileFormatMismatch = error as? ScheduledSoundPlayerError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try player.scheduleSegment(path: mono, startingFrame: 200, frameCount: 10))
        XCTAssertThrowsError(try player.scheduleFile(path: dir.appendingPathComponent("missing.wav").path)) { error in
            guard case .file = error as? ScheduledSoundPlayerError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try player.scheduleBuffer(makeBuffer(channels: 1, frames: 10) { _, _ in 0 })) { error in
            XCTAssertEqual((error as? ScheduledSoundPlayerError)?.description, "player \"p\": the buffer has 1 channels, the player 2")
        }
        XCTAssertThrowsError(try player.scheduleBuffer(makeBuffer(frames: 10) { _, _ in 0 }, frameCount: 11))
        XCTAssertEqual(player.shared.liveRegions.load(ordering: .relaxed), 0, "a refused call scheduled something")
    }

    // MARK: Completion handlers

    /// One buffer per callback type (latency 0.25 s): each handler runs once, with its type,
    /// on the notifier thread (not the thread that renders); consumed and rendered run right
    /// after the render, played-back only once the latency (plus the frame's offset in its
    /// slice) has passed since that render.
    func testCompletionHandlersOfAllThreeTypesRunOnceOffTheRenderThreadAndPlayedBackWaitsForTheLatency() throws {
        let (g, player) = try playerGraph()
        player.outputPresentationLatency = 0.25
        let log = HandlerLog()
        let a = makeBuffer(frames: 700, signal(1)), b = makeBuffer(frames: 700, signal(2)), c = makeBuffer(frames: 700, signal(3))
        try player.scheduleBuffer(a, callbackType: .dataConsumed, completion: log.handler("consumed"))
        try player.scheduleBuffer(b, callbackType: .dataRendered, completion: log.handler("rendered"))
        try player.scheduleBuffer(c, callbackType: .dataPlayedBack, completion: log.handler("playedBack"))
        player.play()
        // c ends at frame 2100: inside the fifth 512-frame slice (2048..<2560), 52 frames in.
        var renderHostTimes: [UInt64] = []
        for _ in 0..<6 {
            renderHostTimes.append(ScheduledPlayerShared.hostTimeNow())
            _ = g.render(frameCount: 512)
        }
        let renderThread = UInt(pthread_self())
        XCTAssertTrue(log.wait(for: 3))
        let entries = log.all
        XCTAssertEqual(entries.map(\.name), ["consumed", "rendered", "playedBack"])
        XCTAssertEqual(entries.map(\.type), [.dataConsumed, .dataRendered, .dataPlayedBack])
        for e in entries {
            XCTAssertNotEqual(e.thread, renderThread, "\(e.name) ran on the render thread")
            XCTAssertEqual(e.thread, player.testOnly_notifierThreadID, "\(e.name) did not run on the notifier thread")
        }
        let playedBackDelay = Double(entries[2].hostTime - renderHostTimes[4]) / 1e9
        let minimum = 0.25 + 52.0 / 48000
        print("played-back handler: \(playedBackDelay) s after the render of the last frame (latency 0.25 s + 52 frames)")
        XCTAssertGreaterThanOrEqual(playedBackDelay, minimum)
        XCTAssertLessThan(playedBackDelay, minimum + 0.5, "the played-back handler came far too late")
        XCTAssertLessThan(Double(entries[1].hostTime - renderHostTimes[3]) / 1e9, 0.25,
                          "the rendered handler should not wait for the latency")
        usleep(50_000)
        XCTAssertEqual(log.all.count, 3, "a handler ran twice")
    }

    /// With a latency provider (what the engine installs), the notifier keeps
    /// `outputPresentationLatency` current and `.dataPlayedBack` waits for the provided value.
    func testPlayedBackFollowsTheLatencyProvider() throws {
        let (g, player) = try playerGraph()
        player.setOutputPresentationLatencyProvider { 0.2 }
        let log = HandlerLog()
        try player.scheduleBuffer(makeBuffer(frames: 600, signal(1)), callbackType: .dataPlayedBack, completion: log.handler("a"))
        let deadline = Date().addingTimeInterval(2)
        while player.outputPresentationLatency != 0.2 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(player.outputPresentationLatency, 0.2, "the notifier did not take the provider's latency")
        player.play()
        _ = g.render(frameCount: 512)
        let renderStart = ScheduledPlayerShared.hostTimeNow()
        _ = g.render(frameCount: 512)                      // the buffer ends 88 frames in
        XCTAssertTrue(log.wait(for: 1))
        let delay = Double(log.all[0].hostTime - renderStart) / 1e9
        XCTAssertGreaterThanOrEqual(delay, 0.2 + 88.0 / 48000)
        XCTAssertLessThan(delay, 0.2 + 0.5)
    }

    // MARK: Transport and timelines

    /// Scheduled data waits until `play`; pause stops the player timeline (silence, nil
    /// conversions); resume continues the buffer where it paused; conversions follow.
    func testScheduledDataWaitsForPlayAndPauseResumeContinuesExactly() throws {
        let (g, player) = try playerGraph(slice: 64)
        let a = makeBuffer(frames: 2000, signal(3))
        try player.scheduleBuffer(a)
        var out = renderFrames(g, frames: 256, channels: 2)
        XCTAssertTrue(out[0].allSatisfy { $0 == 0 }, "played before play()")
        player.play()                                   // node 256 = player 0
        var part = renderFrames(g, frames: 600, channels: 2)
        for c in 0..<2 { out[c] += part[c] }
        XCTAssertEqual(player.playerTime(forNodeTime: 856), 600)
        player.pause()                                  // at node 856, player 600
        XCTAssertFalse(player.isPlaying)
        XCTAssertNil(player.playerTime(forNodeTime: 900))
        part = renderFrames(g, frames: 320, channels: 2)
        for c in 0..<2 { out[c] += part[c] }
        player.play()                                   // node 1176 = player 600
        XCTAssertNil(player.nodeTime(forPlayerTime: 600), "no conversion before the render thread started playing")
        part = renderFrames(g, frames: 1600, channels: 2)
        for c in 0..<2 { out[c] += part[c] }
        XCTAssertEqual(player.nodeTime(forPlayerTime: 600), 1176)
        XCTAssertEqual(player.playerTime(forNodeTime: 2000), 1424)
        var expected = reference(total: 2776, [(256, a, 600)])
        for c in 0..<2 { for i in 600..<2000 where 1176 + i - 600 < 2776 { expected[c][1176 + i - 600] = a.list.channel(c)[i] } }
        XCTAssertNil(firstDifference(out, expected))
    }

    /// `stop()` runs every pending handler before it returns (on the calling thread, in
    /// scheduling order), silences the player and returns the player timeline to 0.
    func testStopRunsPendingHandlersAndResetsThePlayerTimeline() throws {
        let (g, player) = try playerGraph(slice: 128)
        let log = HandlerLog()
        let a = makeBuffer(frames: 1000, signal(1)), b = makeBuffer(frames: 1000, signal(2))
        try player.scheduleBuffer(a, completion: log.handler("a"))
        try player.scheduleBuffer(b, callbackType: .dataPlayedBack, completion: log.handler("b"))
        try player.scheduleBuffer(a, at: 5000, options: .loops, completion: log.handler("c"))
        player.play()
        _ = renderFrames(g, frames: 512, channels: 2)
        XCTAssertEqual(log.all.count, 0)
        player.stop()
        XCTAssertEqual(log.names, ["a", "b", "c"], "stop() must run the pending handlers before returning")
        XCTAssertEqual(log.all.map(\.thread), Array(repeating: UInt(pthread_self()), count: 3))
        XCTAssertEqual(log.all.map(\.type), [.dataConsumed, .dataPlayedBack, .dataConsumed])
        XCTAssertFalse(player.isPlaying)
        let silent = renderFrames(g, frames: 512, channels: 2)   // node 512..<1024
        XCTAssertTrue(silent[0].allSatisfy { $0 == 0 } && silent[1].allSatisfy { $0 == 0 })
        // Player time starts from 0 again: a buffer at player time 64 plays 64 frames after play.
        try player.scheduleBuffer(b, at: 64, completion: log.handler("d"))
        player.play()
        let out = renderFrames(g, frames: 1280, channels: 2)       // node 1024...
        XCTAssertNil(firstDifference(out, reference(total: 1280, [(64, b, 1000)])))
        XCTAssertTrue(log.wait(for: 4))
        XCTAssertEqual(log.names, ["a", "b", "c", "d"], "stopped regions ran their handlers again")
    }

    /// `stop()` before the graph is initialized takes the queued regions back itself.
    func testStopBeforeInitializeRunsHandlersAndReleasesRegions() throws {
        let player = ScheduledSoundPlayerNode(id: "p", format: format)
        let log = HandlerLog()
        try player.scheduleBuffer(makeBuffer(frames: 10) { _, _ in 1 }, completion: log.handler("a"))
        player.play()
        player.stop()
        XCTAssertEqual(log.names, ["a"])
        XCTAssertEqual(player.shared.liveRegions.load(ordering: .relaxed), 0)
        XCTAssertEqual(player.shared.commands.count, 0)
    }

    /// A completion handler may schedule the next buffer (the streaming pattern): the chain
    /// plays without a gap as long as each buffer arrives before the previous one ends.
    func testHandlersMayScheduleAgain() throws {
        let (g, player) = try playerGraph(slice: 256)
        let buffers = (0..<4).map { makeBuffer(frames: 4096, signal($0 + 1)) }
        let scheduled = Atomic<Int>(2)   // buffers 0 and 1 are scheduled up front
        let log = HandlerLog()
        @Sendable func next(_ type: ScheduledCompletionCallbackType) {
            let i = scheduled.add(1, ordering: .relaxed).newValue - 1
            if i < 4 { try? player.scheduleBuffer(buffers[i], completion: next) }
            log.handler("done")(type)
        }
        // Each completion schedules the buffer two ahead, so one is always queued (as a streaming
        // application keeps its queue ahead of the player).
        try player.scheduleBuffer(buffers[0], completion: next)
        try player.scheduleBuffer(buffers[1], completion: next)
        player.play()
        var out = [[Float]](repeating: [], count: 2)
        for _ in 0..<(4 * 4096 / 256) {
            let part = renderFrames(g, frames: 256, channels: 2)
            for c in 0..<2 { out[c] += part[c] }
            usleep(2000)   // give the notifier time, as a live output would
        }
        var expected = [[Float]](repeating: [], count: 2)
        for c in 0..<2 { for b in buffers { expected[c] += UnsafeBufferPointer(start: b.list.channel(c), count: 4096) } }
        XCTAssertNil(firstDifference(out, expected), "the chain scheduled from the handlers has a gap or a repeat")
        XCTAssertTrue(log.wait(for: 4))
    }

    /// The notifier thread starts with the first schedule call and is joined when the node goes
    /// away; a segment's disk thread ends when the segment is done.
    func testThreadsEndWithTheirSegmentsAndTheNode() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("short.wav").path
        try TestFiles.writeSoundFile(path, [[Float](repeating: 0.25, count: 1000), [Float](repeating: -0.25, count: 1000)], sampleRate: 48000)
        // Threads other tests left behind may still be ending: start from a steady count.
        var before = ProcessThreads.count
        for _ in 0..<50 {
            usleep(20_000)
            let now = ProcessThreads.count
            if now == before { break }
            before = now
        }
        do {
            let (g, player) = try playerGraph()
            let log = HandlerLog()
            try player.scheduleSegment(path: path, startingFrame: 100, frameCount: 500, completion: log.handler("segment"))
            XCTAssertEqual(ProcessThreads.count, before + 2, "a notifier and a disk thread")
            player.play()
            let out = renderFrames(g, frames: 1024, channels: 2)
            XCTAssertEqual(out[0][499], 0.25)
            XCTAssertEqual(out[1][499], -0.25)
            XCTAssertEqual(out[0][500], 0)
            XCTAssertTrue(log.wait(for: 1))
            let deadline = Date().addingTimeInterval(2)
            while ProcessThreads.count > before + 1 && Date() < deadline { usleep(2000) }
            XCTAssertEqual(ProcessThreads.count, before + 1, "the disk thread outlived its segment")
            g.stop()
            g.uninitialize()
        }
        let deadline = Date().addingTimeInterval(2)
        while ProcessThreads.count > before && Date() < deadline { usleep(2000) }
        XCTAssertEqual(ProcessThreads.count, before, "the notifier thread outlived its node")
    }

    /// `at: nil` with nothing before (or the previous region already over) plays at the frame
    /// the next slice starts; an `at:` time already passed plays the rest of the region from
    /// there (the past part is skipped, as AUScheduledSoundPlayer does with late slices).
    func testLateRegionsStartAtTheNextSliceAndSkipWhatHasPassed() throws {
        for slice in [1, 64, 512] {
            let (g, player) = try playerGraph()
            let a = makeBuffer(frames: 700, signal(1)), b = makeBuffer(frames: 400, signal(2)), c = makeBuffer(frames: 600, signal(3))
            player.play()
            var out = renderFrames(g, frames: 1000, channels: 2, slices: [slice])
            try player.scheduleBuffer(a)                       // nothing before: now, node 1000
            var part = renderFrames(g, frames: 2000, channels: 2, slices: [slice])
            for ch in 0..<2 { out[ch] += part[ch] }
            try player.scheduleBuffer(b)                       // a ended at 1700: now, node 3000
            part = renderFrames(g, frames: 1000, channels: 2, slices: [slice])
            for ch in 0..<2 { out[ch] += part[ch] }
            try player.scheduleBuffer(c, at: 3800)             // 200 frames late at node 4000
            part = renderFrames(g, frames: 1000, channels: 2, slices: [slice])
            for ch in 0..<2 { out[ch] += part[ch] }
            var expected = reference(total: 5000, [(1000, a, 700), (3000, b, 400)])
            for ch in 0..<2 { for i in 200..<600 { expected[ch][4000 + i - 200] = c.list.channel(ch)[i] } }
            XCTAssertNil(firstDifference(out, expected), "slice \(slice)")
            g.stop()
        }
    }

    /// A 44.1 kHz player into a 48 kHz mixer (the mixer converts its input's rate): the player
    /// renders on its own 44.1 kHz timeline, and a 1 kHz tone buffer of 0.1 s comes out as a
    /// 1 kHz tone of 0.1 s at 48 kHz.
    func testPlayerAtAnotherRateBehindAConvertingMixer() throws {
        let player = ScheduledSoundPlayerNode(id: "p", format: StreamFormat.canonical(sampleRate: 44100, channelCount: 1))
        let mixer = MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 1)
        let g = try startedGraph([player, mixer], "p -> mix -> out")
        let tone = makeBuffer(channels: 1, frames: 4410) { _, i in Float(0.5 * sin(2 * Double.pi * 1000 * Double(i) / 44100)) }
        try player.scheduleBuffer(tone, at: 4410)          // 0.1 s in
        player.play()
        let out = renderFrames(g, frames: 24000, channels: 2)[0]
        let loud = out.indices.filter { abs(out[$0]) > 0.05 }
        XCTAssertFalse(loud.isEmpty)
        let (first, last) = (loud.first ?? 0, loud.last ?? 0)
        XCTAssertEqual(Double(first) / 48000, 0.1, accuracy: 0.002)
        XCTAssertEqual(Double(last - first) / 48000, 0.1, accuracy: 0.002)
        let middle = Array(out[(first + 480)..<(first + 4320)])
        let fit = toneFit(middle, frequency: 1000, sampleRate: 48000)
        XCTAssertEqual(fit.amplitude, 0.5 * 0.7071, accuracy: 0.05, "equal-power mono-to-stereo pan of the mixer")
        XCTAssertLessThan(fit.residualRMS, 0.01)
    }

    /// A handler may stop the player: the regions still pending run their handlers there (on the
    /// notifier thread) and nothing plays after the stop reaches the render thread.
    func testAHandlerMayStopThePlayer() throws {
        let (g, player) = try playerGraph()
        let log = HandlerLog()
        let a = makeBuffer(frames: 512, signal(1)), b = makeBuffer(frames: 512, signal(2))
        let stopper = log.handler("a")
        try player.scheduleBuffer(a) { type in
            stopper(type)
            player.stop()
        }
        try player.scheduleBuffer(b, completion: log.handler("b"))
        player.play()
        var out = renderFrames(g, frames: 512, channels: 2)
        XCTAssertTrue(log.wait(for: 2))
        XCTAssertEqual(log.names, ["a", "b"])
        XCTAssertEqual(log.all[1].thread, player.testOnly_notifierThreadID)
        XCTAssertFalse(player.isPlaying)
        let rest = renderFrames(g, frames: 1024, channels: 2)
        for c in 0..<2 { out[c] += rest[c] }
        XCTAssertNil(firstDifference(out, reference(total: 1536, [(0, a, 512)])))
    }
}
