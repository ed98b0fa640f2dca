// Tests of WAVFileWriter: plain WAV files byte for byte as libsndfile writes them, without loading it.
import AudioGraphCore
import CSndFile
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class WAVFileWriterTests: XCTestCase {
    /// Samples with every edge a conversion has: full scale and past it both ways, NaN and the
    /// infinities, subnormals, values half a step between two integers of each grid, and a sine.
    private func signal(channels: Int, frames: Int) -> [[Float]] {
        let edges: [Float] = [0, 1, -1, 1.5, -1.5, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, -1e-40,
                              0.5 / 32768, -1.5 / 32768, 0.5 / 8_388_608, 2.5 / 8_388_608, 0.99999994, -0.99999994,
                              Float(32767.5 / 32768), Float(-32768.5 / 32768), 0.25, -0.75]
        return (0..<channels).map { c in
            (0..<frames).map { i in
                let k = i + 7 * c
                return k % 3 == 0 ? edges[(k / 3) % edges.count] : Float(1.2 * sin(Double(k) * 0.0311 + Double(c)))
            }
        }
    }

    /// The file libsndfile writes for `samples` as ``AudioFileWriter`` used to hand them to it:
    /// interleaved, integer types first rounded to their grid (`SampleConversion.quantize`),
    /// clipping on, no PEAK chunk.
    private func libsndfileReference(_ path: String, _ samples: [[Float]], type: SampleType, sampleRate: Int32) throws {
        let ch = samples.count, frames = samples[0].count
        var info = SF_INFO()
        info.samplerate = sampleRate
        info.channels = Int32(ch)
        let subtype: Int32
        switch type {
        case .int16: subtype = Int32(SF_FORMAT_PCM_16)
        case .int24: subtype = Int32(SF_FORMAT_PCM_24)
        case .int32: subtype = Int32(SF_FORMAT_PCM_32)
        case .float32: subtype = Int32(SF_FORMAT_FLOAT)
        case .float64: subtype = Int32(SF_FORMAT_DOUBLE)
        }
        info.format = Int32(SF_FORMAT_WAV) | subtype
        let file = try XCTUnwrap(sf_open(path, Int32(SFM_WRITE), &info), String(cString: sf_strerror(nil)))
        sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        sf_command(file, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        var interleaved = [Float](repeating: 0, count: frames * ch)
        for c in 0..<ch { for i in 0..<frames { interleaved[i * ch + c] = samples[c][i] } }
        if type == .float64 {
            let doubles = interleaved.map(Double.init)
            XCTAssertEqual(doubles.withUnsafeBufferPointer { sf_writef_double(file, $0.baseAddress, Int64(frames)) }, Int64(frames))
        } else {
            interleaved.withUnsafeMutableBufferPointer { SampleConversion.quantize($0.baseAddress!, count: frames * ch, to: type) }
            XCTAssertEqual(interleaved.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, Int64(frames)) }, Int64(frames))
        }
        XCTAssertEqual(sf_close(file), 0)
    }

    /// Every sample type, 1 to 8 channels, empty, one-frame, odd-length (a pad byte) and
    /// multi-write files: ``AudioFileWriter``'s `.wav` (through ``WAVFileWriter``) is libsndfile's
    /// file, byte for byte, clipping, NaN and header included; also with the header rewritten
    /// after every write. Seen failing (odd int24 files one byte short) with the pad byte left out.
    func testFilesAreLibsndfilesByteForByte() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        var compared = 0
        for type in [SampleType.int16, .int24, .int32, .float32, .float64] {
            for ch in [1, 2, 3, 6, 8] {
                for frames in [0, 1, 3, 1001] {
                    for writesThrough in [false, true] where !writesThrough || frames == 1001 {
                        let samples = signal(channels: ch, frames: frames)
                        let ours = dir.appendingPathComponent("ours.wav").path
                        let theirs = dir.appendingPathComponent("theirs.wav").path
                        let w = try AudioFileWriter(path: ours, format: StreamFormat(sampleRate: 44100, channelCount: ch, sampleType: type),
                                                    expectedFrames: Int64(frames))
                        XCTAssertFalse(w.isRF64)
                        if writesThrough { w.updateHeaderAfterEveryWrite() }
                        let storage = ChannelBufferStorage(channelCount: ch, capacity: max(1, frames))
                        for c in 0..<ch { for i in 0..<frames { storage.list.channel(c)[i] = samples[c][i] } }
                        // In uneven pieces, as a render's slices come.
                        var done = 0
                        for piece in [1, 500, 499, 1] where done < frames {
                            let n = min(piece, frames - done)
                            let part = ChannelBufferStorage(channelCount: ch, capacity: n)
                            for c in 0..<ch { for i in 0..<n { part.list.channel(c)[i] = samples[c][done + i] } }
                            try w.write(part.list, frameCount: n)
                            done += n
                        }
                        try w.close()
                        try libsndfileReference(theirs, samples, type: type, sampleRate: 44100)
                        let a = try Data(contentsOf: URL(fileURLWithPath: ours)), b = try Data(contentsOf: URL(fileURLWithPath: theirs))
                        XCTAssertEqual(a.count, b.count, "\(type) \(ch) ch \(frames) frames")
                        if a != b {
                            let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
                            XCTFail("\(type) \(ch) ch \(frames) frames writesThrough \(writesThrough): first difference at byte \(at)")
                        }
                        compared += 1
                    }
                }
            }
        }
        XCTAssertEqual(compared, 5 * 5 * 5)
    }

    /// libsndfile reads what the writer wrote: rate, channels, length, and the samples (floats exactly).
    func testLibsndfileReadsTheFiles() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("r.wav").path
        let samples = signal(channels: 3, frames: 777).map { $0.map { $0.isFinite ? max(-1, min(1, $0)) : 0 } }
        let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 96000, channelCount: 3, sampleType: .float32))
        let storage = ChannelBufferStorage(channelCount: 3, capacity: 777)
        for c in 0..<3 { for i in 0..<777 { storage.list.channel(c)[i] = samples[c][i] } }
        try w.write(storage.list, frameCount: 777)
        try w.close()
        let read = try AudioFileReader.read(path: path)
        XCTAssertEqual(read.info, AudioFileInfo(sampleRate: 96000, channels: 3, frames: 777))
        XCTAssertEqual(read.channels, samples)
    }

    /// What the writer refuses, each with its one-line error: a channel count libsndfile refuses
    /// too (`SF_MAX_CHANNELS`, 1,024; also in `validate`), and a folder that does not exist.
    func testRefusals() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("wide.wav").path
        XCTAssertThrowsError(try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 1025))) {
            XCTAssertEqual($0 as? AudioFileError, .unsupportedSampleType(path: path, sampleType: .float32))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "nothing created")
        XCTAssertThrowsError(try AudioFileWriter.validate(path: "x.wav", sampleType: .int16, channels: 1025, sampleRate: 48000))
        XCTAssertNoThrow(try AudioFileWriter.validate(path: "x.wav", sampleType: .int16, channels: 1024, sampleRate: 48000))
        let missing = dir.appendingPathComponent("no/such/folder/a.wav").path
        XCTAssertThrowsError(try AudioFileWriter(path: missing, format: StreamFormat(sampleRate: 48000, channelCount: 2))) {
            XCTAssertEqual("\($0)", "\(missing): cannot open: No such file or directory")
        }
    }
}
