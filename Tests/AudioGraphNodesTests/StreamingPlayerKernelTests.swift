// Tests of streaming players: bit-identical to the in-memory path and to the file, memory, starvation, errors, threads.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphNodes

final class StreamingPlayerKernelTests: XCTestCase {
    let sr = 48000.0
    /// Frames of the test file: several times the test ring (32 768 frames).
    let length = 150_000
    let slices = [1, 64, 512, 4096]

    private var saved: StreamingPlayerSettings?

    override func setUp() {
        saved = .override(ringFrames: 1 << 15)
    }

    override func tearDown() {
        saved?.restore()
    }

    /// A stereo float file of `length` frames of noise-like values (left) and a ramp (right), all
    /// distinct, so that any misplaced frame shows.
    private func file(rate: Double = 48000, frames: Int? = nil) throws -> String {
        let n = frames ?? length
        let path = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("long.wav").path
        var state: UInt32 = 12345
        let left = (0..<n).map { _ -> Float in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state) >> 8) / Float(1 << 23)
        }
        let right = (0..<n).map { Float($0) / Float(n) - 0.5 }
        try TestFiles.writeSoundFile(path, [left, right], sampleRate: rate)
        return path
    }

    private func player(_ path: String, streaming: Bool, loop: Bool = false, start: Double = 0,
                        segment: PlayerSegment? = nil) throws -> PlayerNode {
        PlayerNode.streamingThreshold = streaming ? 0.01 : 1e9
        return try PlayerNode(id: "p", sampleRate: sr,
                              properties: PlayerProperties(file: "long.wav", path: path, loop: loop, startTime: start, segment: segment))
    }

    /// Renders like OfflineRenderer: before each slice, runs the actions due at that frame (then
    /// `update()`), prepares every player, then renders. Slices stop at action frames.
    private func renderPrepared(_ g: AudioGraph, frames: Int, channels: Int, slice: Int,
                                actions: [Int: (AudioGraph) throws -> Void] = [:]) throws -> [[Float]] {
        var out = [[Float]](repeating: [], count: channels)
        var done = 0
        let due = actions.keys.sorted()
        while done < frames {
            if let act = actions[done] {
                try act(g)
                try g.update(waitUntilApplied: false)
            }
            var n = min(slice, frames - done)
            if let next = due.first(where: { $0 > done }) { n = min(n, next - done) }
            for case let p as PlayerNode in g.nodes {
                p.prepareForOfflineRender(graphSampleTime: g.renderSampleTime, graphSampleRate: g.sampleRate)
            }
            let r = g.render(frameCount: n)
            for c in 0..<channels {
                if let r, c < r.channelCount, !r.isSilent {
                    out[c] += UnsafeBufferPointer(start: r.buffer.channel(c), count: n)
                } else {
                    out[c] += [Float](repeating: 0, count: n)
                }
            }
            g.collectRetiredPlans()
            done += n
        }
        return out
    }

    /// Renders the same player configuration streaming and in memory at every slice size;
    /// returns the streamed outputs (per slice size) and the in-memory one at 512.
    private func renderBoth(_ path: String, frames: Int, loop: Bool = false, start: Double = 0,
                            segment: PlayerSegment? = nil, through: String = "p -> out", extra: () -> [GraphNode] = { [] },
                            actions: [Int: (AudioGraph) throws -> Void] = [:]) throws -> (streamed: [[[Float]]], memory: [[Float]]) {
        let threadsBefore = ProcessThreads.count(named: FileStreamer.threadName)
        let mem = try player(path, streaming: false, loop: loop, start: start, segment: segment)
        let gm = try startedGraph([mem] + extra(), through, slice: 512)
        XCTAssertFalse(mem.isStreaming)
        let memory = try renderPrepared(gm, frames: frames, channels: 2, slice: 512, actions: actions)
        var streamed: [[[Float]]] = []
        for slice in slices {
            let s = try player(path, streaming: true, loop: loop, start: start, segment: segment)
            let g = try startedGraph([s] + extra(), through, slice: slice)
            XCTAssertTrue(s.isStreaming)
            streamed.append(try renderPrepared(g, frames: frames, channels: 2, slice: slice, actions: actions))
            XCTAssertEqual(s.streamStarvedFrames, 0, "slice \(slice): the render found frames missing")
            XCTAssertEqual(s.streamReadFailures, 0)
            g.uninitialize()
        }
        gm.uninitialize()
        XCTAssertLessThanOrEqual(settleThreads(atMost: threadsBefore), threadsBefore, "a disk-reader thread was left behind")
        return (streamed, memory)
    }

    /// The file's samples read directly with libsndfile.
    private func fileSamples(_ path: String) throws -> [[Float]] { try AudioFileReader.read(path: path).channels }

    private func assertIdentical(_ got: [[Float]], _ expected: [[Float]], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for c in 0..<2 {
            XCTAssertEqual(got[c].count, expected[c].count, what, file: file, line: line)
            if let i = zip(got[c], expected[c]).enumerated().first(where: { $0.element.0.bitPattern != $0.element.1.bitPattern })?.offset {
                XCTFail("\(what): channel \(c) differs first at frame \(i): \(got[c][i]) vs \(expected[c][i])", file: file, line: line)
            }
        }
    }

    func testStreamingPlaysExactlyTheFileWithASegmentAndAStartTime() throws {
        let path = try file()
        let x = try fileSamples(path)
        // Segment 0.5 s (24 000) for 2.5 s (120 000 frames), from graph frame 0.1 s (4 800).
        let (streamed, memory) = try renderBoth(path, frames: 130_000, start: 0.1, segment: PlayerSegment(start: 0.5, duration: 2.5))
        let expected = (0..<2).map { c in (0..<130_000).map { n in (4800..<124_800).contains(n) ? x[c][24_000 + n - 4800] : 0 } }
        assertIdentical(memory, expected, "in memory vs the file")
        for (i, s) in streamed.enumerated() { assertIdentical(s, expected, "streamed at slice \(slices[i]) vs the file") }
    }

    func testStreamingLoopWrapsSeveralTimesExactly() throws {
        let path = try file()
        let x = try fileSamples(path)
        // The whole file (longer than the ring) looping from frame 1000: 3 wraps in 460 000 frames.
        let (streamed, memory) = try renderBoth(path, frames: 460_000, loop: true, start: 1000 / sr)
        let expected = (0..<2).map { c in (0..<460_000).map { n in n < 1000 ? 0 : x[c][(n - 1000) % self.length] } }
        assertIdentical(memory, expected, "in memory vs the file")
        for (i, s) in streamed.enumerated() { assertIdentical(s, expected, "streamed at slice \(slices[i]) vs the file") }
        // A short looping segment (0.2 s = 9 600 frames from 1 s): many wraps inside the ring.
        let (streamed2, memory2) = try renderBoth(path, frames: 100_000, loop: true, segment: PlayerSegment(start: 1, duration: 0.2))
        let expected2 = (0..<2).map { c in (0..<100_000).map { n in x[c][48_000 + n % 9600] } }
        assertIdentical(memory2, expected2, "short loop in memory vs the file")
        for (i, s) in streamed2.enumerated() { assertIdentical(s, expected2, "short loop streamed at slice \(slices[i])") }
    }

    func testStreamingAt44100IntoA48000MixerEqualsTheInMemoryPath() throws {
        let path = try file(rate: 44100)
        let (streamed, memory) = try renderBoth(path, frames: 170_000, segment: PlayerSegment(start: 0.25),
                                                through: "p -> mix -> out",
                                                extra: { [MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 1)] })
        // The resampled file is there (not silence): the ramp channel's mean over 1 s is about that of the file's frames.
        XCTAssertGreaterThan(memory[1][48_000..<96_000].map { abs($0) }.max()!, 0.1)
        for (i, s) in streamed.enumerated() { assertIdentical(s, memory, "streamed at slice \(slices[i]) vs in memory, through the rate converter") }
    }

    /// Offline, behind a rate converter (which pulls the player ahead of the graph frame in
    /// blocks of its own): the disk thread is gone after the first preparation, every file frame
    /// is read exactly once (counted), and the output equals the in-memory path.
    func testOfflineStreamingReadsEveryFrameOnceOnTheRenderingThread() throws {
        let path = try file(rate: 44100)
        let mem = try player(path, streaming: false)
        let gm = try startedGraph([mem, MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 1)], "p -> mix -> out", slice: 512)
        // The whole file (150 000 frames at 44.1 kHz = 163 266 at 48 kHz) and a little silence after it.
        let frames = 170_000
        let memory = try renderPrepared(gm, frames: frames, channels: 2, slice: 512)
        gm.uninitialize()
        for slice in slices {
            let s = try player(path, streaming: true)
            let g = try startedGraph([s, MixerNode(id: "mix", sampleRate: 48000, inputBusCount: 1)], "p -> mix -> out", slice: slice)
            let streamer = try XCTUnwrap((s.kernel as? StreamingPlayerKernel)?.streamer)
            XCTAssertFalse(streamer.isSynchronous)
            let threadsWithReader = runningReaderThreads()
            let out = try renderPrepared(g, frames: frames, channels: 2, slice: slice)
            XCTAssertTrue(streamer.isSynchronous)
            XCTAssertLessThanOrEqual(settleThreads(atMost: threadsWithReader - 1), threadsWithReader - 1,
                                     "slice \(slice): the disk-reader thread still runs while rendering offline")
            XCTAssertEqual(streamer.testOnly_framesRead.load(ordering: .relaxed), Int64(length),
                           "slice \(slice): file frames read (each exactly once)")
            XCTAssertEqual(s.streamStarvedFrames, 0)
            XCTAssertEqual(s.streamReadFailures, 0)
            assertIdentical(out, memory, "streamed offline at slice \(slice) vs in memory")
            g.uninitialize()
        }
    }

    func testStartTimeAndSegmentChangesThroughAChangeList() throws {
        let path = try file()
        let x = try fileSamples(path)
        // Frame 20 000: startTime 0.5 s (frame 24 000 of the node's time); frame 50 000: segment
        // 2 s for 0.5 s (96 000..<120 000), looping from then on; frame 90 000: startTime 0.
        let actions: [Int: (AudioGraph) throws -> Void] = [
            20_000: { try $0.node("p")!.setProperty("startTime", 0.5) },
            50_000: { g in
                try g.node("p")!.setProperty("segment", PlayerSegment(start: 2, duration: 0.5) as PlayerSegment?)
                try g.node("p")!.setProperty("loop", true)
            },
            90_000: { try $0.node("p")!.setProperty("startTime", 0.0) },
        ]
        let (streamed, memory) = try renderBoth(path, frames: 120_000, actions: actions)
        let expected = (0..<2).map { c in
            (0..<120_000).map { n -> Float in
                switch n {
                case ..<20_000: return x[c][n]
                case ..<24_000: return 0
                case ..<50_000: return x[c][n - 24_000]
                case ..<90_000: return x[c][96_000 + (n - 24_000) % 24_000]
                default: return x[c][96_000 + n % 24_000]
                }
            }
        }
        assertIdentical(memory, expected, "in memory vs the file")
        for (i, s) in streamed.enumerated() { assertIdentical(s, expected, "streamed at slice \(slices[i]) vs the file") }
    }

    /// A slow disk while rendering live (no preparation): the render returns at once with
    /// silence, counts exactly the missing frames, and plays the right frames once they arrive.
    func testALiveRenderStarvedByASlowDiskOutputsSilenceAndCountsWithoutWaiting() throws {
        let path = try file()
        let x = try fileSamples(path)
        let p = try player(path, streaming: true)
        let g = try startedGraph([p], "p -> out", slice: 256)
        // The ring was filled at initialize: the first slices play.
        let head = renderFrames(g, frames: 2560, channels: 2)
        XCTAssertTrue(head[0] == Array(x[0][0..<2560]))
        let streamer = try XCTUnwrap(p.kernel as? StreamingPlayerKernel).streamer
        streamer.testOnly_readDelayMicroseconds.store(300_000, ordering: .relaxed)
        // A jump: play from 2 s into the file (a segment change makes the reader seek). Timeline
        // frame t then plays file frame 96 000 + t.
        try p.setProperty("segment", PlayerSegment(start: 2) as PlayerSegment?)
        try g.update(waitUntilApplied: false)
        // Render like a live thread (a slice every 2 ms) for 80 slices (≥ 160 ms): the reader
        // answers the seek, then sits in a 300 ms read.
        var worst = 0.0
        var y: [Float] = []
        for _ in 0..<80 {
            let t0 = Date()
            let r = g.render(frameCount: 256)!
            worst = max(worst, Date().timeIntervalSince(t0))
            y += UnsafeBufferPointer(start: r.buffer.channel(0), count: 256)
            usleep(2000)
        }
        XCTAssertTrue(y.allSatisfy { $0 == 0 }, "silence while the disk is slow")
        XCTAssertEqual(p.streamStarvedFrames, 80 * 256, "every missing frame counted")
        // The disk recovers (after the read in progress); go on until the sound is back.
        streamer.testOnly_readDelayMicroseconds.store(0, ordering: .relaxed)
        let deadline = Date().addingTimeInterval(3)
        var audibleSlices = 0
        while audibleSlices < 40 && Date() < deadline {
            let t0 = Date()
            let r = g.render(frameCount: 256)!
            worst = max(worst, Date().timeIntervalSince(t0))
            y += UnsafeBufferPointer(start: r.buffer.channel(0), count: 256)
            if y.suffix(256).contains(where: { $0 != 0 }) { audibleSlices += 1 }
            usleep(2000)
        }
        XCTAssertLessThan(worst, 0.05, "a render waited for the disk (its reads took 300 ms)")
        XCTAssertEqual(audibleSlices, 40, "the sound came back")
        // Every frame is either the right one or silence, and the silent ones are exactly those counted.
        var silent = 0, wrong = 0
        for (k, v) in y.enumerated() {
            let expected = x[0][96_000 + 2560 + k]
            if v == 0 && expected != 0 { silent += 1 } else if v != expected { wrong += 1 }
        }
        XCTAssertEqual(wrong, 0, "frames out of place")
        XCTAssertEqual(Int64(silent), p.streamStarvedFrames)
        XCTAssertGreaterThan(silent, 80 * 256)
        XCTAssertTrue(y.suffix(40 * 256).allSatisfy { $0 != 0 } || y.suffix(40 * 256).filter { $0 == 0 }.count < 3,
                      "once back, the sound plays on")
        print("live starvation: \(silent) frames silent and counted; slowest render \(String(format: "%.2f", worst * 1000)) ms")
        let threads = runningReaderThreads()
        g.uninitialize()
        XCTAssertLessThanOrEqual(settleThreads(atMost: threads - 1), threads - 1, "the disk thread ends with its kernel")
    }

    /// The file shrinks under a streaming player: the missing frames play as silence and are
    /// counted; nothing crashes or hangs.
    func testAFileTruncatedWhileStreamingPlaysSilenceAndCountsFailures() throws {
        let path = try file()
        let x = try fileSamples(path)
        let p = try player(path, streaming: true)
        let g = try startedGraph([p], "p -> out", slice: 512)
        // Keep the first 60 000 frames (WAV header 80 bytes or so, 8 bytes a frame).
        let headerBytes = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) - length * 8
        XCTAssertEqual(truncate(path, off_t(headerBytes + 60_000 * 8)), 0)
        let y = try renderPrepared(g, frames: length, channels: 2, slice: 512)
        // What the ring already held (filled at initialize) plays; past the cut it is silence.
        XCTAssertTrue(Array(y[0][0..<60_000]) == Array(x[0][0..<60_000]), "the frames before the cut play")
        XCTAssertTrue(y[0][60_000...].allSatisfy { $0 == 0 }, "silence after the cut")
        XCTAssertGreaterThan(p.streamReadFailures, 0)
        XCTAssertEqual(p.streamStarvedFrames, 0)
        g.uninitialize()
    }

    /// Ten minutes of stereo float at 48 kHz (230 MB decoded): initialize is quick and the
    /// process grows by a few megabytes, not by the decoded size; the samples are right, also
    /// after a segment change to minute nine.
    func testATenMinuteFileInitializesQuicklyInLittleMemory() throws {
        saved?.restore()  // the defaults: streams files over 30 s, ring 2^17 frames
        let frames = 600 * 48000
        let path = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("ten-minutes.wav").path
        do {
            let chunk = 48000
            let s = ChannelBufferStorage(channelCount: 2, capacity: chunk)
            let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 2))
            for k in 0..<(frames / chunk) {
                for i in 0..<chunk {
                    let n = k * chunk + i
                    s.list.channel(0)[i] = Float(n % 65536) / 65536
                    s.list.channel(1)[i] = -Float(n / 65536) / 65536
                }
                try w.write(s.list, frameCount: chunk)
            }
            try w.close()
        }
        let decodedBytes = frames * 2 * 4
        let threads = ProcessThreads.count(named: FileStreamer.threadName)
        let before = residentBytes()
        let t0 = Date()
        let p = try PlayerNode(id: "p", sampleRate: sr, properties: PlayerProperties(file: "ten-minutes.wav", path: path))
        let g = try startedGraph([p], "p -> out", slice: 512)
        let initTime = Date().timeIntervalSince(t0)
        XCTAssertTrue(p.isStreaming, "a 10-minute file streams by default")
        XCTAssertEqual(p.playedDuration!, 600, accuracy: 1e-9)
        let y = try renderPrepared(g, frames: 240_000, channels: 2, slice: 512)
        try p.setProperty("segment", PlayerSegment(start: 540, duration: 10) as PlayerSegment?)
        let z = try renderPrepared(g, frames: 96_000, channels: 2, slice: 512, actions: [0: { _ in }])
        let after = residentBytes()
        print("streaming 10 min stereo float (\(decodedBytes / 1_000_000) MB decoded): initialize \(String(format: "%.1f", initTime * 1000)) ms, "
              + "RSS \(before / 1_000_000) MB -> \(after / 1_000_000) MB (+\((after - before) / 1000) kB)")
        for n in stride(from: 0, to: 240_000, by: 997) {
            XCTAssertEqual(y[0][n], Float(n % 65536) / 65536)
            XCTAssertEqual(y[1][n], -Float(n / 65536) / 65536)
        }
        // After the segment change at timeline frame 240 000: file frame 540 s * 48 000 + (t - 0).
        for k in stride(from: 0, to: 96_000, by: 991) {
            let n = 540 * 48000 + 240_000 + k
            XCTAssertEqual(z[0][k], Float(n % 65536) / 65536, "frame \(k) after the segment change")
            XCTAssertEqual(z[1][k], -Float(n / 65536) / 65536)
        }
        XCTAssertEqual(p.streamStarvedFrames, 0)
        XCTAssertLessThan(initTime, 0.5, "initialize must not decode the file")
        XCTAssertLessThan(after - before, 16_000_000, "RSS grew by \(after - before) bytes (decoded: \(decodedBytes))")
        g.uninitialize()
        XCTAssertLessThanOrEqual(settleThreads(atMost: threads), threads)
    }

    /// Waits (at most 2 s) until this process has at most `count` threads; returns the last count.
    /// (Threads of earlier tests may still be exiting, so the count may also drop below.)
    /// The disk-reader threads now running, once the newest has named itself (it does so as it
    /// starts, a moment after its streamer is made): waits up to 2 s for at least one.
    private func runningReaderThreads() -> Int {
        let deadline = Date().addingTimeInterval(2)
        var now = ProcessThreads.count(named: FileStreamer.threadName)
        while now < 1 && Date() < deadline {
            usleep(1000)
            now = ProcessThreads.count(named: FileStreamer.threadName)
        }
        return now
    }

    private func settleThreads(atMost count: Int) -> Int {
        let deadline = Date().addingTimeInterval(2)
        var now = ProcessThreads.count(named: FileStreamer.threadName)
        while now > count && Date() < deadline {
            usleep(5000)
            now = ProcessThreads.count(named: FileStreamer.threadName)
        }
        return now
    }

    /// Resident set size of this process, from /proc/self/statm.
    private func residentBytes() -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = Int(text.split(separator: " ")[1]) ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
