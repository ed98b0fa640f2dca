// Tests of PlayerNode: start time, segment, loop, volume and silence, from WAV files written here.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class PlayerNodeTests: XCTestCase {
    let sr = 48000.0
    /// The file's samples: x[i] = (i + 1) / 2048 (exact in float32), 1000 frames.
    let length = 1000
    func x(_ i: Int) -> Double { Double(i + 1) / 2048 }

    private func file(channels: Int = 1, rate: Double = 48000) throws -> String {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("in.wav").path
        let data = (0..<channels).map { c in (0..<length).map { Float(x($0)) * (c == 0 ? 1 : -1) } }
        try TestFiles.writeSoundFile(path, data, sampleRate: rate)
        return path
    }

    private func player(_ path: String, loop: Bool = false, start: Double = 0, segment: PlayerSegment? = nil,
                        volume: Double = 1) throws -> PlayerNode {
        let p = try PlayerNode(id: "p", sampleRate: sr,
                               properties: PlayerProperties(file: "in.wav", path: path, loop: loop, startTime: start, segment: segment))
        try p.setParameter("volume", volume)
        return p
    }

    func testPlaysTheFileFromItsStartTimeThenSilence() throws {
        let p = try player(try file(), start: 0.01)
        XCTAssertEqual(p.fileInfo, AudioFileInfo(sampleRate: 48000, channels: 1, frames: 1000))
        XCTAssertEqual(p.playedDuration!, 0.01 + 1000 / 48000, accuracy: 1e-12)
        let y = renderFrames(try startedGraph([p], "p -> out", slice: 100), frames: 2000, channels: 1)[0]
        // startTime 0.01 s = frame 480.
        let e = SignalMeasurement.worstError(y) { n in (480..<1480).contains(n) ? self.x(n - 480) : 0 }
        XCTAssertEqual(e.error, 0, "at frame \(e.at)")
    }

    func testSegmentAndVolume() throws {
        // segment 2 ms (96 frames) for 4 ms (192 frames), volume 0.5, starting at frame 48.
        let p = try player(try file(), start: 0.001, segment: PlayerSegment(start: 0.002, duration: 0.004), volume: 0.5)
        XCTAssertEqual(p.playedFrameRange, 96..<288)
        let y = renderFrames(try startedGraph([p], "p -> out", slice: 64), frames: 600, channels: 1)[0]
        let e = SignalMeasurement.worstError(y) { n in (48..<240).contains(n) ? 0.5 * self.x(n - 48 + 96) : 0 }
        XCTAssertEqual(e.error, 0, "at frame \(e.at)")
    }

    func testLoopWrapsExactly() throws {
        let p = try player(try file(channels: 2), loop: true, start: 0.0025, segment: PlayerSegment(start: 0.001, duration: 0.005))
        XCTAssertNil(p.playedDuration)
        // Frames 48..<288 of the file, looping, from frame 120.
        let y = renderFrames(try startedGraph([p], "p -> out", slice: 512), frames: 5000, channels: 2, slices: [512, 77, 240, 1])
        let e0 = SignalMeasurement.worstError(y[0]) { n in n < 120 ? 0 : self.x(48 + (n - 120) % 240) }
        let e1 = SignalMeasurement.worstError(y[1]) { n in n < 120 ? 0 : -self.x(48 + (n - 120) % 240) }
        XCTAssertEqual(e0.error, 0, "at frame \(e0.at)")
        XCTAssertEqual(e1.error, 0, "at frame \(e1.at)")
    }

    func testOutputFormatIsTheFiles() throws {
        let p = try player(try file(channels: 2, rate: 44100))
        let g = try startedGraph([p], "p -> out")
        XCTAssertEqual(p.outputFormats, [.canonical(sampleRate: 44100, channelCount: 2)])
        let r = try XCTUnwrap(g.render(frameCount: 4))
        XCTAssertEqual(r.buffer.channel(0)[3], Float(x(3)))
        XCTAssertEqual(r.buffer.channel(1)[3], -Float(x(3)))
    }

    func testSilenceIsFlaggedAfterTheEnd() throws {
        let p = try player(try file())
        let g = try startedGraph([p], "p -> out", slice: 512)
        XCTAssertFalse(try XCTUnwrap(g.render(frameCount: 512)).isSilent)
        XCTAssertFalse(try XCTUnwrap(g.render(frameCount: 512)).isSilent)
        XCTAssertTrue(try XCTUnwrap(g.render(frameCount: 512)).isSilent)
    }

    func testLoopCanBeSwitchedOnWhileRunning() throws {
        let p = try player(try file())
        let g = try startedGraph([p], "p -> out", slice: 500)
        _ = g.render(frameCount: 500)
        try p.setProperty("loop", true)
        XCTAssertEqual(g.pendingChanges.count, 1, "queued on the running graph")
        try g.update(waitUntilApplied: false)
        let y = renderFrames(g, frames: 1000, channels: 1)[0]
        // Frames 500..<1500 of the timeline: the file's 500..<1000 then 0..<500 again.
        let e = SignalMeasurement.worstError(y) { n in self.x((500 + n) % 1000) }
        XCTAssertEqual(e.error, 0, "at frame \(e.at)")
        XCTAssertThrowsError(try p.setProperty("file", "other.wav"))
        XCTAssertThrowsError(try p.setProperty("loop", 3.0))
    }

    func testAPlayerAddedWhileRunningThroughARateConverterStartsAtItsFrame() throws {
        // A 1 kHz tone file at 44.1 kHz, added at graph frame 4800 (0.1 s) into a 48 kHz mixer.
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("tone.wav").path
        try TestFiles.writeSoundFile(path, [(0..<44100).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 44100)) }], sampleRate: 44100)
        let mix = MixerNode(id: "mix", sampleRate: sr, inputBusCount: 2)
        let g = try startedGraph([formulaSource("quiet", channels: 1) { _, _ in 0 }, mix], "quiet -> mix:0; mix -> out", slice: 256)
        _ = renderFrames(g, frames: 4800, channels: 2, slices: [256, 100])
        try g.addNode(try PlayerNode(id: "p", sampleRate: sr, properties: PlayerProperties(file: "tone.wav", path: path)))
        try g.connect("p", to: "mix", inputBus: 1)
        try g.update(waitUntilApplied: false)
        let y = renderFrames(g, frames: 40000, channels: 2)[0]
        // Output frame 4800 + k is the file at time k / 48000: fit 2000...38000 (past the converter's start-up).
        let part = Array(y[2000..<38000])
        var s = 0.0, c = 0.0
        for (i, v) in part.enumerated() {
            let w = 2 * Double.pi * 1000 * Double(2000 + i) / sr
            s += Double(v) * sin(w)
            c += Double(v) * cos(w)
        }
        let a = 2 * s / Double(part.count), b = 2 * c / Double(part.count)
        let expected = 0.5 * 0.5.squareRoot()
        XCTAssertEqual(20 * log10((a * a + b * b).squareRoot() / expected), 0, accuracy: 0.05)
        XCTAssertEqual(atan2(b, a), 0, accuracy: 0.02, "aligned with the frame it was added")
    }

    func testStartTimeChangedWhileRunning() throws {
        let p = try player(try file(), start: 1)
        let g = try startedGraph([p], "p -> out", slice: 100)
        _ = renderFrames(g, frames: 500, channels: 1)
        try p.setProperty("startTime", 0.02)  // frame 960 of the node's time
        try g.update(waitUntilApplied: false)
        let y = renderFrames(g, frames: 2000, channels: 1)[0]
        let e = SignalMeasurement.worstError(y) { i in
            let n = 500 + i
            return (960..<1960).contains(n) ? self.x(n - 960) : 0
        }
        XCTAssertEqual(e.error, 0, "at \(e.at)")
        XCTAssertThrowsError(try p.setProperty("startTime", -1.0))
    }

    func testMissingFileFailsToSetUp() {
        XCTAssertThrowsError(try PlayerNode(id: "p", sampleRate: sr, properties: PlayerProperties(file: "x.wav", path: "/nonexistent/x.wav"))) {
            guard case .nodeSetupFailed(node: "p", _) = $0 as? AudioGraphError else { return XCTFail("\($0)") }
        }
    }
}
