// Tests of RecorderNode: the file it writes equals what passed through it, bit for bit, and temporaries never stay.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

#if canImport(Glibc)
import Glibc
#endif

final class RecorderNodeTests: XCTestCase {
    /// Two channels of an irregular formula (not a constant, not periodic in a slice).
    func source() -> RenderCallbackNode {
        formulaSource("src", channels: 2) { c, n in
            Float(0.6 * sin(0.0137 * Double(n) * Double(c + 1)) + 0.3 * cos(0.00071 * Double(n * n % 100_003)))
        }
    }

    func files(in dir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }

    /// Offline (manual delivery, drained after every render call, irregular slices): the file
    /// holds exactly the frames the output received, bit for bit, and only the final file stays.
    func testOfflineRecordingEqualsTheOutputBitForBit() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("take.wav").path
        let rec = RecorderNode(id: "rec", path: path, delivery: .manual)
        let g = try startedGraph([source(), rec], "src -> rec -> out", slice: 512)
        var out = [[Float]](repeating: [], count: 2)
        for _ in 0..<8 {
            for n in [512, 7, 300, 512, 1, 129] {
            let chunk = renderFrames(g, frames: n, channels: 2)
            rec.drain()
            for c in 0..<2 { out[c] += chunk[c] }
            }
        }
        g.stop()
        XCTAssertTrue(try files(in: dir).contains { $0.hasPrefix(".take.partial-") }, "written aside while recording")
        try rec.finish()
        XCTAssertEqual(try files(in: dir), ["take.wav"])
        let (info, channels) = try AudioFileReader.read(path: path)
        XCTAssertEqual(info.sampleRate, 48000)
        XCTAssertEqual(channels.count, 2)
        XCTAssertEqual(out[0].count, 8 * (512 + 7 + 300 + 512 + 1 + 129))
        XCTAssertEqual(channels, out, "the file is what passed through, bit for bit")
        XCTAssertEqual(rec.recordedFrameCount, out[0].count)
        XCTAssertEqual(rec.droppedFrameCount, 0)
        XCTAssertFalse(out[0].allSatisfy { $0 == 0 })
    }

    /// Live delivery (the node's own writer thread) while a thread renders paced slices: nothing
    /// dropped, the file equals the output, the temporary is renamed on finish.
    func testThreadDeliveryWritesEverythingWhileRendering() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("live.flac").path
        let rec = RecorderNode(id: "rec", path: path, )
        let g = try startedGraph([source(), rec], "src -> rec -> out", slice: 256)
        XCTAssertEqual(rec.fileFormat?.sampleType, .int24, "FLAC's default sample type")
        var out = [[Float]](repeating: [], count: 2)
        for _ in 0..<200 {
            let chunk = renderFrames(g, frames: 256, channels: 2)
            for c in 0..<2 { out[c] += chunk[c] }
            usleep(200)
        }
        g.stop()
        try rec.finish()
        XCTAssertEqual(try files(in: dir), ["live.flac"])
        let (_, channels) = try AudioFileReader.read(path: path)
        XCTAssertEqual(rec.droppedFrameCount, 0)
        XCTAssertEqual(channels[0].count, out[0].count)
        // int24: each sample within one step (2^-23) of what passed through.
        for c in 0..<2 {
            for i in out[c].indices {
                let expected = Double(out[c][i])
                if abs(Double(channels[c][i]) - expected) > 1.0 / 8_388_608 {
                    XCTFail("channel \(c) frame \(i): \(channels[c][i]) != \(expected)")
                    return
                }
            }
        }
    }

    /// A writer that falls behind (here: nobody drains) makes the render thread drop whole buffers
    /// and count them, never wait: the file then holds the buffers that fitted, bit for bit, and
    /// recorded + dropped frames are all the frames rendered.
    func testOverrunsAreCountedAndNeverBlock() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("over.wav").path
        let rec = RecorderNode(id: "rec", path: path, delivery: .manual)
        let g = try startedGraph([source(), rec], "src -> rec -> out", slice: 512)
        let out = renderFrames(g, frames: 100 * 512, channels: 2)
        g.stop()
        try rec.finish()
        let (_, channels) = try AudioFileReader.read(path: path)
        print("recorder overrun: \(rec.recordedFrameCount) frames recorded, \(rec.droppedFrameCount) dropped of \(out[0].count)")
        XCTAssertGreaterThan(rec.droppedFrameCount, 0)
        XCTAssertEqual(rec.recordedFrameCount + rec.droppedFrameCount, out[0].count)
        XCTAssertEqual(channels[0].count, rec.recordedFrameCount)
        XCTAssertEqual(channels[0], Array(out[0][0..<rec.recordedFrameCount]), "the buffers that fitted come first, unchanged")
        XCTAssertEqual(channels[1], Array(out[1][0..<rec.recordedFrameCount]))
    }

    /// A recording never finished (graph uninitialized, node freed) removes its temporary and
    /// leaves no file; a second initialize starts a new temporary, and the first one is gone.
    func testUnfinishedRecordingLeavesNothing() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("gone.wav").path
        var rec: RecorderNode? = RecorderNode(id: "rec", path: path, delivery: .manual)
        var g: AudioGraph? = try startedGraph([source(), rec!], "src -> rec -> out")
        _ = renderFrames(g!, frames: 4096, channels: 2)
        rec!.drain()
        XCTAssertEqual(try files(in: dir).count, 1)
        g!.uninitialize()
        try g!.initialize()
        XCTAssertEqual(try files(in: dir).count, 1, "one temporary at a time")
        g!.uninitialize()
        g = nil
        rec = nil
        XCTAssertEqual(try files(in: dir), [])
    }

    /// A file type not known by its extension fails at initialize with the node named.
    func testUnsupportedTypeFailsAtInitialize() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let rec = RecorderNode(id: "rec", path: dir.appendingPathComponent("x.xyz").path)
        XCTAssertThrowsError(try startedGraph([source(), rec], "src -> rec -> out")) { error in
            XCTAssertTrue("\(error)".contains("\"rec\""), "\(error)")
        }
        XCTAssertEqual(try files(in: dir), [])
    }
}
