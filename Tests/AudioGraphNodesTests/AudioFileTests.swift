// Tests of AudioFileReader/AudioFileWriter: round trips for WAV, FLAC and AIFF in several sample types.
import AudioGraphCore
import CSndFile
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class AudioFileTests: XCTestCase {
    /// Two channels of a test signal inside ±1 (a sine and a ramp), 3000 frames.
    let data: [[Float]] = [
        (0..<3000).map { Float(0.9 * sin(Double($0) * 0.0123)) },
        (0..<3000).map { Float(-1 + 2 * Double($0) / 3000) * 0.99 },
    ]

    private func roundTrip(_ ext: String, _ type: SampleType, tolerance: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("t.\(ext)").path
        try TestFiles.writeSoundFile(path, data, sampleRate: 44100, sampleType: type)
        let info = try AudioFileReader.info(path: path)
        XCTAssertEqual(info, AudioFileInfo(sampleRate: 44100, channels: 2, frames: 3000), file: file, line: line)
        let read = try AudioFileReader.read(path: path)
        XCTAssertEqual(read.channels.count, 2, file: file, line: line)
        for c in 0..<2 {
            XCTAssertEqual(read.channels[c].count, 3000, file: file, line: line)
            let e = SignalMeasurement.worstError(read.channels[c]) { Double(self.data[c][$0]) }
            XCTAssertLessThanOrEqual(e.error, tolerance, "\(ext) \(type) channel \(c) at \(e.at)", file: file, line: line)
        }
        // A part of the file.
        let part = try AudioFileReader.read(path: path, startFrame: 1000, frameCount: 10)
        XCTAssertEqual(part.channels[1].count, 10, file: file, line: line)
        XCTAssertEqual(Double(part.channels[1][0]), Double(data[1][1000]), accuracy: tolerance, file: file, line: line)
    }

    // Integer types: at most one quantization step (libsndfile scales by 2^(bits-1) - 1 when writing).
    func testWAVFloat32IsExact() throws { try roundTrip("wav", .float32, tolerance: 0) }
    func testWAVFloat64() throws { try roundTrip("wav", .float64, tolerance: 0) }
    func testWAVInt16() throws { try roundTrip("wav", .int16, tolerance: 0.5 / 32768) }
    func testWAVInt24() throws { try roundTrip("wav", .int24, tolerance: 0.5 / 8_388_608 * 1.01) }
    func testWAVInt32() throws { try roundTrip("wav", .int32, tolerance: 1e-7) }
    func testFLACInt16() throws { try roundTrip("flac", .int16, tolerance: 0.5 / 32768) }
    func testFLACInt24() throws { try roundTrip("flac", .int24, tolerance: 0.5 / 8_388_608 * 1.01) }
    func testAIFFInt16() throws { try roundTrip("aiff", .int16, tolerance: 0.5 / 32768) }
    func testAIFFInt24() throws { try roundTrip("aiff", .int24, tolerance: 0.5 / 8_388_608 * 1.01) }
    func testAIFFFloat32() throws { try roundTrip("aiff", .float32, tolerance: 0) }

    func testIntegerSamplesAreRoundedToNearest() throws {
        // libsndfile alone would floor -0.34417728 × 32768 = -11278.001 to -11279; we store -11278.
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let xs: [Float] = [-0.34417728, 0.34417728, -0.17918397, 0.5 / 32768, -0.5 / 32768, 1.4 / 32768, -1.6 / 32768]
        for ext in ["wav", "aiff", "flac"] {
            let path = dir.appendingPathComponent("r.\(ext)").path
            try TestFiles.writeSoundFile(path, [xs], sampleRate: 8000, sampleType: .int16)
            let stored = try AudioFileReader.read(path: path).channels[0].map { Double($0) * 32768 }
            XCTAssertEqual(stored, xs.map { (Double($0) * 32768).rounded(.toNearestOrEven) }, ext)
        }
    }

    func testInt16IsReallySixteenBits() throws {
        // 16-bit quantization is visible: a value between two steps does not survive.
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("q.wav").path
        try TestFiles.writeSoundFile(path, [[0.3 / 32768]], sampleRate: 8000, sampleType: .int16)
        XCTAssertEqual(try AudioFileReader.read(path: path).channels[0][0], 0)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        XCTAssertEqual(size, 44 + 2, "a canonical WAV header and one 16-bit sample")
    }

    func testFloatFilesCarryNoTimestampedPeakChunk() throws {
        // libsndfile adds a PEAK chunk with the time of writing to float WAV/AIFF files unless told
        // not to; renders of the same graph must be byte-identical.
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for ext in ["wav", "aiff"] {
            let path = dir.appendingPathComponent("f.\(ext)").path
            try TestFiles.writeSoundFile(path, data, sampleRate: 48000, sampleType: .float32)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertNil(bytes.range(of: Data("PEAK".utf8)), ext)
        }
    }

    func testClippingInsteadOfWrapping() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("clip.wav").path
        try TestFiles.writeSoundFile(path, [[1.5, -1.5]], sampleRate: 8000, sampleType: .int16)
        let x = try AudioFileReader.read(path: path).channels[0]
        XCTAssertGreaterThan(x[0], 0.999)
        XCTAssertLessThanOrEqual(x[1], -0.999)
    }

    func testMissingChannelsAreWrittenAsSilence() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("wide.wav").path
        let storage = ChannelBufferStorage(channelCount: 1, capacity: 4)
        for i in 0..<4 { storage.list.channel(0)[i] = 0.25 }
        let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 8000, channelCount: 3))
        try w.write(storage.list, frameCount: 4)
        XCTAssertEqual(w.framesWritten, 4)
        try w.close()
        let r = try AudioFileReader.read(path: path)
        XCTAssertEqual(r.channels, [[0.25, 0.25, 0.25, 0.25], [0, 0, 0, 0], [0, 0, 0, 0]])
    }

    // MARK: Past 4 GiB (issue 10)

    /// The container is picked by the length asked for: a WAV whose samples pass the 32-bit
    /// RIFF sizes is RF64; AIFF and AU (no 64-bit variant) are refused; 64-bit types stay.
    func testContainerForTheRequestedLength() throws {
        let stereoFloat = StreamFormat(sampleRate: 48000, channelCount: 2)
        // Four hours of 48 kHz stereo float32: 5.5 GB of samples.
        let fourHours = AudioFileWriter.dataBytes(frames: 4 * 3600 * 48000, format: stereoFloat)
        XCTAssertEqual(fourHours, 4 * 3600 * 48000 * 2 * 4)
        XCTAssertEqual(AudioFileWriter.dataBytes(frames: .max, format: stereoFloat), .max, "saturates")
        let limit = AudioFileWriter.classicSizeLimit
        XCTAssertEqual(limit, 4_294_967_296 - 65536)
        XCTAssertEqual(try AudioFileWriter.majorFormat(forPath: "a.wav", dataBytes: limit), Int32(SF_FORMAT_WAV))
        XCTAssertEqual(try AudioFileWriter.majorFormat(forPath: "a.wav", dataBytes: limit + 1), Int32(SF_FORMAT_RF64))
        XCTAssertEqual(try AudioFileWriter.majorFormat(forPath: "a.WAV", dataBytes: fourHours), Int32(SF_FORMAT_RF64))
        for (ext, major) in [("w64", SF_FORMAT_W64), ("caf", SF_FORMAT_CAF), ("flac", SF_FORMAT_FLAC), ("rf64", SF_FORMAT_RF64)] {
            XCTAssertEqual(try AudioFileWriter.majorFormat(forPath: "a.\(ext)", dataBytes: fourHours), Int32(major), ext)
        }
        for (ext, name) in [("aiff", "AIFF"), ("au", "AU")] {
            XCTAssertEqual(try AudioFileWriter.majorFormat(forPath: "a.\(ext)", dataBytes: limit), ext == "aiff" ? Int32(SF_FORMAT_AIFF) : Int32(SF_FORMAT_AU))
            XCTAssertThrowsError(try AudioFileWriter.majorFormat(forPath: "a.\(ext)", dataBytes: fourHours)) { error in
                XCTAssertEqual(error as? AudioFileError, .tooLarge(path: "a.\(ext)", bytes: fourHours, typeName: name))
                XCTAssertEqual("\(error)", "a.\(ext): \(name) files hold at most 4 GiB of samples; this one needs 5.1 GiB (use .wav, .w64, .rf64, .caf or .flac)")
            }
        }
    }

    /// A writer told the file will pass 4 GiB writes an RF64 header (checked in the bytes), and
    /// libsndfile reads the samples back; told nothing, it writes a plain RIFF WAV as before.
    func testALongWAVIsWrittenAsRF64() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let storage = ChannelBufferStorage(channelCount: 2, capacity: 3000)
        for c in 0..<2 { for i in 0..<3000 { storage.list.channel(c)[i] = data[c][i] } }
        for (name, expected, magic) in [("long.wav", Int64(600_000_000), "RF64"), ("short.wav", Int64(3000), "RIFF")] {
            let path = dir.appendingPathComponent(name).path
            let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 2), expectedFrames: expected)
            XCTAssertEqual(w.isRF64, magic == "RF64")
            try w.write(storage.list, frameCount: 3000)
            try w.close()
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertEqual(String(decoding: bytes.prefix(4), as: UTF8.self), magic, name)
            XCTAssertEqual(String(decoding: bytes[8..<12], as: UTF8.self), "WAVE", name)
            let read = try AudioFileReader.read(path: path)
            XCTAssertEqual(read.info, AudioFileInfo(sampleRate: 48000, channels: 2, frames: 3000))
            XCTAssertEqual(read.channels[1], data[1], name)
        }
    }

    func testErrors() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        XCTAssertThrowsError(try AudioFileReader.info(path: dir.appendingPathComponent("missing.wav").path)) {
            guard case .cannotOpen = $0 as? AudioFileError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try AudioFileWriter(path: dir.appendingPathComponent("x.mp9").path,
                                                 format: .canonical(sampleRate: 48000, channelCount: 1))) {
            guard case .unsupportedFileType = $0 as? AudioFileError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try AudioFileWriter.validate(path: "x.flac", sampleType: .float32, channels: 2, sampleRate: 48000)) {
            XCTAssertEqual($0 as? AudioFileError, .unsupportedSampleType(path: "x.flac", sampleType: .float32))
        }
        XCTAssertNoThrow(try AudioFileWriter.validate(path: "x.flac", sampleType: .int24, channels: 2, sampleRate: 48000))
        XCTAssertEqual(AudioFileWriter.defaultSampleType(forPath: "a/b.FLAC"), .int24)
        XCTAssertEqual(AudioFileWriter.defaultSampleType(forPath: "a.wav"), .float32)
        XCTAssertNil(AudioFileWriter.majorFormat(forPath: "noextension"))
        XCTAssertNil(AudioFileWriter.majorFormat(forPath: "dir.wav/file"))
        // A file that is not a sound file.
        let text = dir.appendingPathComponent("text.wav")
        try Data("not a sound file".utf8).write(to: text)
        XCTAssertThrowsError(try AudioFileReader.read(path: text.path))
    }

    // MARK: Batched writing (issue 9)

    /// Slices of odd sizes across several batches come back sample for sample, in float32 and
    /// (through SampleConversion's grid) int16, stereo and three channels.
    func testSlicesAcrossBatchesComeBackExactly() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for (type, channels) in [(SampleType.float32, 2), (.int16, 3), (.float64, 2)] {
            let format = StreamFormat(sampleRate: 48000, channelCount: channels, sampleType: type)
            let frames = 3 * AudioFileWriter.batchBytes / (channels * 4) + 777
            // Exactly representable in int16: k / 32768.
            let signal = (0..<channels).map { c in (0..<frames).map { Float(Int16(truncatingIfNeeded: $0 * (c + 3) % 65536 - 32768)) / 32768 } }
            let path = dir.appendingPathComponent("batched-\(type).wav").path
            let w = try AudioFileWriter(path: path, format: format)
            let slice = ChannelBufferStorage(channelCount: channels, capacity: 1031)
            var done = 0
            while done < frames {
                let n = min(1031, frames - done)
                for c in 0..<channels { for i in 0..<n { slice.list.channel(c)[i] = signal[c][done + i] } }
                try w.write(slice.list, frameCount: n)
                done += n
            }
            XCTAssertEqual(w.framesWritten, Int64(frames))
            try w.close()
            let r = try AudioFileReader.read(path: path)
            XCTAssertEqual(r.info.frames, Int64(frames), "\(type)")
            for c in 0..<channels { XCTAssertTrue(r.channels[c] == signal[c], "\(type) channel \(c)") }
        }
    }

    /// With the header updated after every write, each write is on disk when it returns (no
    /// batch held back): another reader sees every frame while the file is still open.
    func testUpdatingTheHeaderWritesThrough() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("live.wav").path
        let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 2))
        w.updateHeaderAfterEveryWrite()
        let slice = ChannelBufferStorage(channelCount: 2, capacity: 512)
        for i in 0..<512 { slice.list.channel(0)[i] = 0.5; slice.list.channel(1)[i] = -0.5 }
        for k in 1...3 {
            try w.write(slice.list, frameCount: 512)
            let seen = try AudioFileReader.read(path: path)
            XCTAssertEqual(seen.info.frames, Int64(512 * k))
            XCTAssertEqual(seen.channels[1].last, -0.5)
        }
        try w.close()
    }

    /// A write the kernel refuses (here: past the process's file size limit, EFBIG, the way a
    /// full disk refuses with ENOSPC) fails the render: `write` or `close` throws `.ioFailed`,
    /// whichever hands the failing batch to the file; it is never lost in a batch.
    func testAFailingWriteIsReported() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("limited.wav").path
        var old = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_FSIZE.rawValue), &old), 0)
        let oldHandler = signal(SIGXFSZ, SIG_IGN)  // the write fails with EFBIG instead of a signal
        var limited = old
        limited.rlim_cur = 100_000
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limited), 0)
        defer {
            setrlimit(Int32(RLIMIT_FSIZE.rawValue), &old)
            signal(SIGXFSZ, oldHandler)
        }
        let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let slice = ChannelBufferStorage(channelCount: 2, capacity: 512)
        var failure: AudioFileError?
        do {
            // 24 000 frames: 192 000 bytes, past the 100 000-byte limit, less than one batch.
            for _ in 0..<47 { try w.write(slice.list, frameCount: 512) }
            try w.close()
        } catch {
            failure = error
        }
        guard case .ioFailed(let failedPath, _) = failure else { return XCTFail("no failure reported: \(String(describing: failure))") }
        XCTAssertEqual(failedPath, path)
    }
}

extension AudioFileTests {
    /// A writer told to expect fewer frames than it gets (its batch memory sized for the frames
    /// expected) grows the batch and writes every frame, in float32 and float64, across several
    /// writes of uneven sizes. Seen crashing (index out of range) with the growth taken out.
    func testAWriterGetsMoreFramesThanExpected() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for type in [SampleType.float32, .float64] {
            let path = dir.appendingPathComponent("grow-\(type).wav").path
            let storage = ChannelBufferStorage(channelCount: 2, capacity: 3000)
            for c in 0..<2 { storage.list.channel(c).update(from: data[c], count: 3000) }
            do {
                let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 44100, channelCount: 2, sampleType: type),
                                            expectedFrames: 100)
                var done = 0
                for n in [70, 1, 1929, 1000] {
                    let view = ChannelBufferStorage(channelCount: 2, capacity: n)
                    for c in 0..<2 { view.list.channel(c).update(from: storage.list.channel(c) + done, count: n) }
                    try w.write(view.list, frameCount: n)
                    done += n
                }
                try w.close()
            }
            let read = try AudioFileReader.read(path: path)
            XCTAssertEqual(read.channels.count, 2)
            for c in 0..<2 { XCTAssertEqual(read.channels[c], data[c], "\(type) channel \(c)") }
        }
    }
}
