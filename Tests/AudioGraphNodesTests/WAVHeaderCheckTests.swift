// WAVHeaderCheck: WAV files whose LIST chunk libsndfile 1.2 parses forever are refused at once.

import AudioGraphCore
import Foundation
import XCTest
@testable import AudioGraphNodes

final class WAVHeaderCheckTests: XCTestCase {
    private func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "wavheadercheck-\(getpid())-\(name).wav"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        addTeardownBlock { unlink(path) }
        return path
    }

    private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// A mono 16-bit 8 kHz WAV with `list` (a LIST chunk's payload) before four samples
    /// 1000, -2000, 3000, -4000; `dataLength` overrides the data chunk's size field.
    private func wav(list: [UInt8], dataLength: UInt32? = nil) -> [UInt8] {
        let samples: [Int16] = [1000, -2000, 3000, -4000]
        let data = samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
        let fmt: [UInt8] = [1, 0, 1, 0] + le32(8000) + le32(16000) + [2, 0, 16, 0]
        var chunks = Array("fmt ".utf8) + le32(16) + fmt
        chunks += Array("LIST".utf8) + le32(UInt32(list.count)) + list + (list.count % 2 == 1 ? [0] : [])
        chunks += Array("data".utf8) + le32(dataLength ?? UInt32(data.count)) + data
        return Array("RIFF".utf8) + le32(UInt32(4 + chunks.count)) + Array("WAVE".utf8) + chunks
    }

    /// The input FuzzWAVReader found: a plain C `sf_open` of it (libsndfile 1.2.0) did not return
    /// within 60 s. It is refused before libsndfile, at once.
    func testTheFuzzerHangIsRefusedAtOnce() throws {
        let base64 = "UklGRlAAAABXQVZFZm10IBAAAAABAAEAIlYAAESsAAACABAATElTVAT//////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////9////////8AAABJTkZPZGF0YSD//wAAAEreA7zh5AkuLVN4nTcYDDFXew=="
        let path = try write(Array(try XCTUnwrap(Data(base64Encoded: base64))), "hang")
        let start = Date()
        XCTAssertThrowsError(try AudioFileReader.info(path: path)) { error in
            XCTAssertEqual(error as? AudioFileError, .cannotOpen(path: path, reason:
                "its LIST chunk at byte 36 holds a sub-chunk of 4294967295 bytes at byte 48 that runs past the chunk's end"))
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
        // The same sub-chunk in a LIST chunk whose own size fits the file.
        let inside = try write(wav(list: Array("INFO".utf8) + Array("ISFT".utf8) + le32(0xFFFF_FFFF)), "inside")
        XCTAssertEqual(WAVHeaderCheck.problem(inside),
                       "its LIST chunk at byte 36 holds a sub-chunk of 4294967295 bytes at byte 48 that runs past the chunk's end")
    }

    /// LIST chunks that fit are read as before: an odd-length title with its pad byte, an
    /// odd-length last sub-chunk without one, a streamed data size (0xFFFFFFFF) past the end.
    func testListChunksThatFitStillOpen() throws {
        let title = Array("INFO".utf8) + Array("INAM".utf8) + le32(5) + Array("Title".utf8) + [0]
        let unpadded = Array("INFO".utf8) + Array("ICMT".utf8) + le32(3) + Array("abc".utf8)
        for (name, bytes) in [("title", wav(list: title)), ("unpadded", wav(list: unpadded)),
                              ("streamed", wav(list: title, dataLength: 0xFFFF_FFFF))] {
            let path = try write(bytes, name)
            XCTAssertNil(WAVHeaderCheck.problem(path), name)
            let (info, channels) = try AudioFileReader.read(path: path)
            XCTAssertEqual(info.sampleRate, 8000, name)
            XCTAssertEqual(channels, [[1000, -2000, 3000, -4000].map { Float($0) / 32768 }], name)
        }
    }

    /// Files that are not RIFF/WAVE are left to libsndfile.
    func testOtherFilesAreNotJudged() throws {
        XCTAssertNil(WAVHeaderCheck.problem(try write(Array("FORM\0\0\0\u{4}AIFF".utf8), "aiff")))
        XCTAssertNil(WAVHeaderCheck.problem(try write([], "empty")))
    }
}
