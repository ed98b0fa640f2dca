// Tests of WAVFileReader: the samples libsndfile reads from plain WAV files, bit for bit, and the files it leaves to libsndfile.
import AudioGraphCore
import CSndFile
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class WAVFileReaderTests: XCTestCase {
    /// What libsndfile reads from `path`: rate, channels, frames and the interleaved floats.
    private func libsndfileRead(_ path: String) throws -> (info: AudioFileInfo, samples: [Float]) {
        var info = SF_INFO()
        let file = try XCTUnwrap(sf_open(path, Int32(SFM_READ), &info), String(cString: sf_strerror(nil)))
        defer { sf_close(file) }
        var samples = [Float](repeating: 0, count: Int(info.frames) * Int(info.channels))
        let got = samples.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
        XCTAssertEqual(got, info.frames)
        return (AudioFileInfo(sampleRate: Double(info.samplerate), channels: Int(info.channels), frames: info.frames), samples)
    }

    /// Raw little-endian bytes of `values` as `type` (full-range integers, not from floats, so
    /// every bit of the 32-bit and 24-bit grids is exercised).
    private func rawSamples(_ type: SampleType, count: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(seed: seed)
        var out: [UInt8] = []
        for i in 0..<count {
            let r = rng.next()
            switch type {
            case .int16: withUnsafeBytes(of: UInt16(truncatingIfNeeded: i % 7 == 0 ? [UInt64(0x8000), 0x7FFF, 0][(i / 7) % 3] : r).littleEndian) { out += $0 }
            case .int24: withUnsafeBytes(of: UInt32(truncatingIfNeeded: r).littleEndian) { out += $0.prefix(3) }
            case .int32: withUnsafeBytes(of: UInt32(truncatingIfNeeded: i % 5 == 0 ? [UInt64(0x8000_0000), 0x7FFF_FFFF, 0x7FFF_FF80, 1, 0xFFFF_FFFF][(i / 5) % 5] : r).littleEndian) { out += $0 }
            case .float32: withUnsafeBytes(of: Float(Double(Int64(bitPattern: r)) / 4e18).bitPattern.littleEndian) { out += $0 }
            case .float64: withUnsafeBytes(of: (Double(Int64(bitPattern: r)) / 3e18 + (i % 3 == 0 ? 1e-300 : 0)).bitPattern.littleEndian) { out += $0 }
            }
        }
        return out
    }

    /// A WAV file's bytes: `fmt ` as given (tag, extensible or not), `extra` chunks before `data`.
    private func wavFile(_ type: SampleType, channels: Int, rate: UInt32, frames: Int, extensible: Bool, fmtSize: Int = 16,
                         extra: [(String, [UInt8])] = [], seed: UInt64 = 1) -> [UInt8] {
        func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        func u16(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt16(v).littleEndian) { Array($0) } }
        let bytes = type.bytesPerSample, isFloat = type == .float32 || type == .float64
        var fmt = u16(extensible ? 0xFFFE : (isFloat ? 3 : 1)) + u16(channels) + u32(rate) + u32(rate * UInt32(channels * bytes))
            + u16(channels * bytes) + u16(bytes * 8)
        if extensible {
            fmt += u16(22) + u16(bytes * 8) + u32(0) + [isFloat ? 3 : 1, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        } else if fmtSize == 18 {
            fmt += u16(0)
        }
        var body = Array("WAVE".utf8) + Array("fmt ".utf8) + u32(UInt32(fmt.count)) + fmt
        for (id, data) in extra { body += Array(id.utf8) + u32(UInt32(data.count)) + data + (data.count % 2 == 1 ? [0] : []) }
        let samples = rawSamples(type, count: frames * channels, seed: seed)
        body += Array("data".utf8) + u32(UInt32(samples.count)) + samples
        return Array("RIFF".utf8) + u32(UInt32(body.count)) + body
    }

    /// Fails at the first sample whose bits differ (not a dump of thousands of samples).
    private func assertSameBits(_ a: [Float], _ b: [Float], _ what: String, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, what, line: line)
        if let i = zip(a, b).enumerated().first(where: { $0.element.0.bitPattern != $0.element.1.bitPattern })?.offset {
            XCTFail("\(what): sample \(i) is \(a[i]), libsndfile reads \(b[i])", line: line)
        }
    }

    private func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Every sample type, plain and WAVE_FORMAT_EXTENSIBLE, 16- and 18-byte `fmt `, 1 to 6
    /// channels, with LIST, fact and PAD chunks before `data`, full-range integer samples and
    /// random floats: rate, channels, frames and every float equal libsndfile's, bit for bit,
    /// through ``AudioFileReader`` and ``SeekableAudioFileReader`` (reads in pieces, seeks back
    /// and past the end). Seen failing with the EXTENSIBLE sub-format's float GUID read as PCM.
    func testSamplesAreLibsndfilesBitForBit() throws {
        var compared = 0
        for type in [SampleType.int16, .int24, .int32, .float32, .float64] {
            for (channels, extensible, fmtSize) in [(1, false, 16), (2, false, 18), (3, true, 40), (6, true, 40)] {
                let extra: [(String, [UInt8])] = [("LIST", Array("INFOISFT".utf8) + [5, 0, 0, 0] + Array("test".utf8) + [0, 0]),
                                                  ("fact", [100, 0, 0, 0]), ("PAD ", [UInt8](repeating: 0, count: 24))]
                let path = try write(wavFile(type, channels: channels, rate: 44100, frames: 1000 + channels, extensible: extensible,
                                             fmtSize: fmtSize, extra: extra, seed: UInt64(compared)), "t.wav")
                let native = try XCTUnwrap(WAVFileReader.open(path: path), "\(type) \(channels) ch: taken")
                XCTAssertEqual(native.sampleType, type)
                let reference = try libsndfileRead(path)
                XCTAssertEqual(native.info, reference.info, "\(type) \(channels) ch")
                let read = try AudioFileReader.read(path: path)
                XCTAssertEqual(read.info, reference.info)
                for c in 0..<channels {
                    let expected = stride(from: c, to: reference.samples.count, by: channels).map { reference.samples[$0] }
                    assertSameBits(read.channels[c], expected, "\(type) \(channels) ch, channel \(c)")
                }
                // In pieces, out of order, past the end.
                let seekable = try SeekableAudioFileReader(path: path)
                XCTAssertEqual(seekable.storedSampleType, type)
                var piece = [Float](repeating: 0, count: 300 * channels)
                for (at, count, expectedFrames) in [(700, 300, 300), (0, 7, 7), (1000 + channels - 5, 300, 5), (5000, 10, 0)] {
                    let got = piece.withUnsafeMutableBufferPointer { seekable.read(into: $0.baseAddress!, atFrame: Int64(at), frameCount: count) }
                    XCTAssertEqual(got, expectedFrames)
                    if got > 0 {
                        assertSameBits(Array(piece[0..<(got * channels)]), Array(reference.samples[(at * channels)..<((at + got) * channels)]),
                                       "\(type) at \(at)")
                    }
                }
                compared += 1
            }
        }
        XCTAssertEqual(compared, 20)
    }

    /// Files this reader leaves to libsndfile (nil from `open`), which still reads them through
    /// ``AudioFileReader``: 8-bit, a `data` chunk running past the end of the file (a truncated
    /// recording), a zero `data` size followed by samples (never closed), an unknown chunk
    /// before `data`, a 24-bit EXTENSIBLE file with 20 valid bits, AIFF, and a file written by
    /// libsndfile as RF64.
    func testOtherFilesAreLibsndfiles() throws {
        var cases: [(String, [UInt8])] = []
        var eightBit = wavFile(.int16, channels: 1, rate: 8000, frames: 10, extensible: false)
        eightBit[32] = 1; eightBit[34] = 8   // blockAlign 1, 8 bits
        cases.append(("8-bit", eightBit))
        var truncated = wavFile(.int16, channels: 2, rate: 8000, frames: 100, extensible: false)
        truncated.removeLast(40)
        cases.append(("truncated", truncated))
        var unclosed = wavFile(.int16, channels: 1, rate: 8000, frames: 50, extensible: false)
        unclosed[40] = 0; unclosed[41] = 0
        cases.append(("unclosed", unclosed))
        cases.append(("unknown chunk", wavFile(.float32, channels: 1, rate: 8000, frames: 10, extensible: false, extra: [("abcd", [1, 2])])))
        var twentyBits = wavFile(.int24, channels: 2, rate: 8000, frames: 10, extensible: true)
        twentyBits[38] = 20
        cases.append(("20 valid bits", twentyBits))
        for (name, bytes) in cases {
            let path = try write(bytes, "\(name).wav")
            XCTAssertNil(WAVFileReader.open(path: path), name)
            if let reference = try? libsndfileRead(path) {
                XCTAssertEqual(try AudioFileReader.info(path: path), reference.info, name)
            }
        }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for name in ["a.aiff", "b.rf64"] {
            let path = dir.appendingPathComponent(name).path
            try TestFiles.writeSoundFile(path, [[0.5, -0.25, 0.125]], sampleRate: 48000, sampleType: .int16)
            XCTAssertNil(WAVFileReader.open(path: path), name)
            XCTAssertEqual(try AudioFileReader.read(path: path).channels, [[0.5, -0.25, 0.125]], name)
        }
    }

    /// The writer's own files (every type) come back through the native reader as libsndfile
    /// reads them: a render's WAV output read by the next graph does not load libsndfile.
    func testTheWritersFilesAreReadNatively() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for type in [SampleType.int16, .int24, .int32, .float32, .float64] {
            let path = dir.appendingPathComponent("\(type).wav").path
            let samples: [[Float]] = [(0..<333).map { Float(sin(Double($0) * 0.1)) * 0.9 }, (0..<333).map { Float($0) / 333 - 0.5 }]
            try TestFiles.writeSoundFile(path, samples, sampleRate: 22050, sampleType: type)
            let native = try XCTUnwrap(WAVFileReader.open(path: path), "\(type)")
            let reference = try libsndfileRead(path)
            XCTAssertEqual(native.info, reference.info)
            let read = try AudioFileReader.read(path: path)
            assertSameBits(read.channels[1], stride(from: 1, to: reference.samples.count, by: 2).map { reference.samples[$0] }, "\(type)")
        }
    }
}

extension WAVFileReaderTests {
    /// Two files `make fuzz` (FuzzWAVReader, which compares this reader with libsndfile on every
    /// file it takes) found taken here and refused by libsndfile: a second `fmt ` and `RIFF` after
    /// `data` ("No 'RIFF' chunk marker"), and a LIST chunk after `data` holding a `data`
    /// sub-chunk ("SF_INFO struct incomplete"). Both are now left to libsndfile (nil from `open`),
    /// which refuses them through ``AudioFileReader`` as before; seen failing (taken) before the
    /// walk checked the chunks after `data` and the LIST chunks' sub-chunks.
    func testTheFuzzersFilesAreLeftToLibsndfile() throws {
        let files: [[UInt8]] = [[
            0x52, 0x49, 0x46, 0x46, 0x50, 0x03, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6D, 0x74, 0x20,
            0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x22, 0x56, 0x00, 0x00, 0x44, 0xAC, 0x00, 0x00,
            0x02, 0x00, 0x10, 0x00, 0x4C, 0x49, 0x53, 0x54, 0x04, 0x00, 0x00, 0x00, 0x49, 0x4E, 0x46, 0x4F,
            0x64, 0x61, 0x74, 0x61, 0x20, 0x00, 0x00, 0x00, 0x03, 0x25, 0x4A, 0x6F, 0x94, 0xB9, 0xDE, 0x45,
            0x66, 0x6D, 0x74, 0x20, 0x10, 0x00, 0x00, 0x00, 0x41, 0x00, 0x01, 0x00, 0x22, 0x56, 0x00, 0x00,
            0x44, 0xAC, 0x00, 0x00, 0x02, 0x00, 0x10, 0x00, 0x52, 0x49, 0x46, 0x46, 0x84, 0x00, 0x00, 0x00,
            0x57, 0x41, 0x56, 0x45, 0x66, 0x6D, 0x74, 0x20, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
            0x80, 0xBB, 0x00, 0x00, 0x80, 0x32, 0x02, 0x00, 0x03, 0x4C, 0x49, 0x53, 0x54, 0x04, 0x74, 0x20,
            0x10, 0x00, 0x00, 0x18, 0x00, 0x64, 0x61, 0x74, 0x61, 0x60, 0x00, 0x00, 0x00, 0x00, 0x25, 0x4A,
            0x6F, 0x94, 0xB9, 0xDE, 0x03, 0x28, 0x4D, 0x72, 0x97, 0xBC, 0xE1, 0x06, 0x2B, 0x50, 0x75, 0x9A,
            0xBF, 0xE4, 0x09, 0x2E, 0x53, 0x78, 0x9D, 0xC2, 0x00, 0x00, 0x01, 0x00, 0xE7, 0x0C,
        ], [
            0x52, 0x49, 0x46, 0x46, 0xA4, 0x00, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6D, 0x74, 0x20,
            0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x44, 0xBC, 0x00, 0x00, 0x10, 0xB1, 0x02, 0x00,
            0x04, 0x00, 0x10, 0x00, 0x64, 0x61, 0x74, 0x61, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x04, 0x00, 0x97, 0xBC, 0xE1, 0x97, 0x00, 0x4C, 0x49, 0x53, 0x54, 0x26, 0x00, 0x00, 0x00,
            0x49, 0x4E, 0x46, 0x4F, 0x64, 0x61, 0x74, 0x61, 0x20, 0x00, 0x00, 0x00, 0x03, 0x25, 0x4B, 0x6F,
            0x94, 0xB9, 0x54, 0xC0, 0xFF, 0x00, 0x74, 0x20, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
            0x22, 0x42, 0x6F, 0x6F, 0x6C, 0x06, 0x2B,
        ]]
        for (k, bytes) in files.enumerated() {
            let path = try write(bytes, "fuzz-\(k).wav")
            XCTAssertNil(WAVFileReader.open(path: path), "file \(k)")
            XCTAssertThrowsError(try AudioFileReader.info(path: path), "file \(k): libsndfile refuses it")
        }
    }
}
