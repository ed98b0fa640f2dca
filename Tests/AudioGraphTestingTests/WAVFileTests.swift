// Tests WAVFile against files written by libsndfile, against the RIFF layout written out by hand, and by round trips.
import AudioGraphTesting
import Foundation
import XCTest

/// Written by libsndfile through Python's soundfile: scripts/reference/wav_fixtures.py prints them.
private enum LibsndfileFixtures {
    static let float32Stereo = "UklGRnAAAABXQVZFZm10IBAAAAADAAIAIlYAABCxAgAIACAAZmFjdAQAAAAEAAAAUEVBSxgAAAABAAAA0VoCawD+fz8BAAAAAACAPwEAAABkYXRhIAAAAAAAAD8AAIC+AP5/PwAAgL8AAAA+AAAAAAAAAL8AAEA/"
    static let int16Stereo = "UklGRjQAAABXQVZFZm10IBAAAAABAAIAIlYAAIhYAQAEABAAZGF0YRAAAAAAQADg/38AgAAQAAAAwABg"
    static let int24Mono = "UklGRjAAAABXQVZFZm10IBAAAAABAAEAIlYAAGYCAQADABgAZGF0YQwAAAAAAEAA/38AABAAAMA="
    static let float64Mono = "UklGRmgAAABXQVZFZm10IBAAAAADAAEAIlYAABCxAgAIAEAAZmFjdAQAAAAEAAAAUEVBSxAAAAABAAAA0VoCawD+fz8BAAAAZGF0YSAAAAAAAAAAAADgPwAAAADA/+8/AAAAAAAAwD8AAAAAAADgvw=="
    static let extensibleFloat32Stereo = "UklGRogAAABXQVZFZm10ICgAAAD+/wIAIlYAABCxAgAIACAAFgAgAAMAAAADAAAAAAAQAIAAAKoAOJtxZmFjdAQAAAAEAAAAUEVBSxgAAAABAAAA0VoCawD+fz8BAAAAAACAPwEAAABkYXRhIAAAAAAAAD8AAIC+AP5/PwAAgL8AAAA+AAAAAAAAAL8AAEA/"

    /// The samples the script wrote, per channel.
    static let left: [Double] = [0.5, 1 - 1.0 / 32768, 0.125, -0.5]
    static let right: [Double] = [-0.25, -1, 0, 0.75]

    static func file(_ base64: String) throws -> WAVFile {
        try WAVFile(data: Data(base64Encoded: base64)!)
    }
}

final class WAVFileTests: XCTestCase {
    func testReadsLibsndfileFloat32AndSkipsFactAndPeakChunks() throws {
        for base64 in [LibsndfileFixtures.float32Stereo, LibsndfileFixtures.extensibleFloat32Stereo] {
            let file = try LibsndfileFixtures.file(base64)
            XCTAssertEqual(file.sampleRate, 22050)
            XCTAssertEqual(file.sampleType, .float32)
            XCTAssertEqual(file.channelCount, 2)
            XCTAssertEqual(file.frameCount, 4)
            XCTAssertEqual(file.samples, [LibsndfileFixtures.left, LibsndfileFixtures.right])
        }
    }

    func testReadsLibsndfileIntegerAndDoubleFiles() throws {
        let int16 = try LibsndfileFixtures.file(LibsndfileFixtures.int16Stereo)
        XCTAssertEqual(int16.sampleType, .int16)
        XCTAssertEqual(int16.samples, [LibsndfileFixtures.left, LibsndfileFixtures.right])
        let int24 = try LibsndfileFixtures.file(LibsndfileFixtures.int24Mono)
        XCTAssertEqual(int24.sampleType, .int24)
        XCTAssertEqual(int24.samples, [LibsndfileFixtures.left])
        let float64 = try LibsndfileFixtures.file(LibsndfileFixtures.float64Mono)
        XCTAssertEqual(float64.sampleType, .float64)
        XCTAssertEqual(float64.samples, [LibsndfileFixtures.left])
    }

    func testWritesTheRIFFLayoutOfAFloatFile() throws {
        let file = WAVFile(sampleRate: 48000, sampleType: .float32, channels: [[0.5] as [Float], [-1] as [Float]])
        let bytes = [UInt8](try file.data())
        let expected: [UInt8] =
            Array("RIFF".utf8) + [58, 0, 0, 0] + Array("WAVE".utf8)         // 4 + 26 + 12 + 8 + 8 data bytes
            + Array("fmt ".utf8) + [18, 0, 0, 0]
            + [3, 0] + [2, 0] + [0x80, 0xBB, 0, 0]                          // IEEE float, 2 channels, 48000 Hz
            + [0x00, 0xDC, 0x05, 0] + [8, 0] + [32, 0] + [0, 0]            // 384000 bytes/s, block 8, 32 bits, cbSize
            + Array("fact".utf8) + [4, 0, 0, 0] + [1, 0, 0, 0]
            + Array("data".utf8) + [8, 0, 0, 0]
            + [0, 0, 0, 0x3F] + [0, 0, 0x80, 0xBF]                          // 0.5f, -1.0f
        XCTAssertEqual(bytes, expected)
    }

    func testWritesSixteenBitPCMScaledBy32767() throws {
        let file = WAVFile(sampleRate: 8000, sampleType: .int16, channels: [[1.0, -1.0, 0.5, 2.0, -0.25] as [Double]])
        let bytes = [UInt8](try file.data())
        XCTAssertEqual(Array(bytes[20..<22]), [1, 0], "PCM tag")
        XCTAssertEqual(bytes.count, 44 + 10)
        XCTAssertEqual(Array(bytes[44...]), [0xFF, 0x7F, 0x01, 0x80, 0x00, 0x40, 0xFF, 0x7F, 0x00, 0xE0],
                       "32767, -32767, round(16383.5) = 16384, clipped 32767, round(-8191.75) = -8192")
        let back = try WAVFile(data: try file.data())
        XCTAssertEqual(back.samples[0], [32767, -32767, 16384, 32767, -8192].map { Double($0) / 32768 })
    }

    func testFloatRoundTripThroughAFile() throws {
        let left = TestSignals.sine(frequency: 440, amplitude: 0.9, sampleRate: 44100, count: 1001).map { Float($0) }
        let right = TestSignals.lcgNoise(count: 1001).map { Float($0) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("wavfile-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: url) }
        try WAVFile(sampleRate: 44100, channels: [left, right]).write(to: url)
        let back = try WAVFile(contentsOf: url)
        XCTAssertEqual(back.sampleRate, 44100)
        XCTAssertEqual(back.sampleType, .float32)
        XCTAssertEqual(back.samples, [left.map { Double($0) }, right.map { Double($0) }])
    }

    func testRejectsWhatIsNotAReadableWAV() throws {
        XCTAssertThrowsError(try WAVFile(data: Data("RIFF\0\0\0\0AVI LIST".utf8))) {
            XCTAssertEqual($0 as? WAVFile.Error, .notWAV)
        }
        var good = [UInt8](try LibsndfileFixtures.file(LibsndfileFixtures.int16Stereo).data())
        XCTAssertThrowsError(try WAVFile(data: Data(good.dropLast(3)))) {
            XCTAssertEqual($0 as? WAVFile.Error, .truncated)
        }
        XCTAssertThrowsError(try WAVFile(data: Data(good.prefix(36)))) {
            XCTAssertEqual($0 as? WAVFile.Error, .missingChunk("data"))
        }
        good[20] = 2  // ADPCM
        XCTAssertThrowsError(try WAVFile(data: Data(good))) {
            XCTAssertEqual($0 as? WAVFile.Error, .unsupportedFormat(formatTag: 2, bitsPerSample: 16))
        }
        XCTAssertThrowsError(try WAVFile(sampleRate: 48000, sampleType: .int24, channels: [[0.0]]).data()) {
            XCTAssertEqual($0 as? WAVFile.Error, .unsupportedWriteType(.int24))
        }
        XCTAssertThrowsError(try WAVFile(sampleRate: 48000, channels: [[0.0], [0.0, 1.0]]).data()) {
            XCTAssertEqual($0 as? WAVFile.Error, .unequalChannelLengths)
        }
    }
}
