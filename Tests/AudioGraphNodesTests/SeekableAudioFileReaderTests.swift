// Tests of SeekableAudioFileReader: pieces read anywhere equal the whole file read by AudioFileReader.
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class SeekableAudioFileReaderTests: XCTestCase {
    func testPiecesAnywhereEqualTheFile() throws {
        let path = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("f.wav").path
        let n = 50_000
        try TestFiles.writeSoundFile(path, [(0..<n).map { Float($0) / Float(n) }, (0..<n).map { -Float($0) / Float(n) }], sampleRate: 44100)
        let whole = try AudioFileReader.read(path: path).channels
        let reader = try SeekableAudioFileReader(path: path)
        XCTAssertEqual(reader.info, AudioFileInfo(sampleRate: 44100, channels: 2, frames: Int64(n)))
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 4096)
        defer { buffer.deallocate() }
        // Backwards, forwards, contiguous and overlapping pieces.
        for (start, count) in [(40_000, 4096), (0, 100), (100, 4096), (4196, 1), (12_345, 3000), (49_000, 4096)] {
            let got = reader.read(into: buffer, atFrame: Int64(start), frameCount: count)
            XCTAssertEqual(got, min(count, n - start), "piece at \(start)")
            for i in 0..<got {
                XCTAssertEqual(buffer[2 * i], whole[0][start + i])
                XCTAssertEqual(buffer[2 * i + 1], whole[1][start + i])
            }
        }
        XCTAssertEqual(reader.read(into: buffer, atFrame: Int64(n), frameCount: 10), 0, "nothing past the end")
        XCTAssertThrowsError(try SeekableAudioFileReader(path: path + ".missing"))
    }

    func testStoredSampleTypeIsTheFilesEncoding() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let one = ChannelBufferStorage(channelCount: 1, capacity: 8)
        for (name, type) in [("a.wav", SampleType.int16), ("b.flac", .int24), ("c.aiff", .int32), ("d.wav", .float32),
                             ("e.wav", .float64)] {
            let path = dir.appendingPathComponent(name).path
            let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 8000, channelCount: 1, sampleType: type))
            try w.write(one.list, frameCount: 8)
            try w.close()
            XCTAssertEqual(try SeekableAudioFileReader(path: path).storedSampleType, type, name)
        }
        // Vorbis decodes to floats.
        let ogg = dir.appendingPathComponent("f.ogg").path
        let w = try AudioFileWriter(path: ogg, format: StreamFormat(sampleRate: 8000, channelCount: 1, sampleType: .int16))
        try w.write(one.list, frameCount: 8)
        try w.close()
        XCTAssertEqual(try SeekableAudioFileReader(path: ogg).storedSampleType, .float32)
    }
}
