// AudioFile: writing a known sine in several file types, reading it back in pieces, errors naming the file.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class AudioFileTests: XCTestCase {
    static let rate = 48000.0
    static let frames = 10_000
    /// Half a 16-bit step (round to nearest), plus the Float rounding of the formula.
    static let int16Tolerance = 0.5 / 32768 + 3e-8

    /// The reference signal: channel 0 a 440 Hz sine of amplitude 0.5, channel 1 1 kHz at 0.25.
    static func sine(_ channel: Int, _ n: Int) -> Double {
        channel == 0 ? 0.5 * sin(2 * .pi * 440 * Double(n) / rate) : 0.25 * sin(2 * .pi * 1000 * Double(n) / rate)
    }

    /// Writes the reference sine through `write(from:)` in buffers of 3000 frames (the last partial).
    @discardableResult
    func writeSine(_ url: URL, settings: [String: Any]) throws -> AudioFile {
        let file = try AudioFile(forWriting: url, settings: settings)
        XCTAssertTrue(file.processingFormat.isStandard)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: 3000))
        var n = 0
        while n < Self.frames {
            let count = min(3000, Self.frames - n)
            let data = try XCTUnwrap(buffer.floatChannelData)
            for c in 0..<2 { for i in 0..<count { data[c][i] = Float(Self.sine(c, n + i)) } }
            buffer.frameLength = AudioFrameCount(count)
            try file.write(from: buffer)
            n += count
        }
        XCTAssertEqual(file.length, AudioFramePosition(Self.frames))
        XCTAssertEqual(file.framePosition, AudioFramePosition(Self.frames))
        file.close()
        return file
    }

    /// Reads the file back in 1000-frame pieces, jumping with framePosition, and compares with the formula.
    func readBackInPieces(_ url: URL, tolerance: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        let f = try AudioFile(forReading: url)
        XCTAssertEqual(f.length, AudioFramePosition(Self.frames), file: file, line: line)
        XCTAssertEqual(f.processingFormat, AudioFormat(standardFormatWithSampleRate: Self.rate, channels: 2), file: file, line: line)
        XCTAssertEqual(f.fileFormat.sampleRate, Self.rate, file: file, line: line)
        XCTAssertEqual(f.fileFormat.channelCount, 2, file: file, line: line)
        XCTAssertEqual(f.url, url, file: file, line: line)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: f.processingFormat, frameCapacity: 1000))
        // Out of order: the middle, the start, the end (partial), then past the end.
        for start in [4321, 0, 9500] {
            f.framePosition = AudioFramePosition(start)
            try f.read(into: buffer)
            let expected = min(1000, Self.frames - start)
            XCTAssertEqual(Int(buffer.frameLength), expected, "read at \(start)", file: file, line: line)
            XCTAssertEqual(f.framePosition, AudioFramePosition(start + expected), file: file, line: line)
            let data = try XCTUnwrap(buffer.floatChannelData)
            var worst = 0.0
            for c in 0..<2 { for i in 0..<expected { worst = max(worst, abs(Double(data[c][i]) - Self.sine(c, start + i))) } }
            XCTAssertLessThanOrEqual(worst, tolerance, "read at \(start)", file: file, line: line)
        }
        try f.read(into: buffer)
        XCTAssertEqual(buffer.frameLength, 0, "at the end", file: file, line: line)
        // frameCount smaller than the capacity.
        f.framePosition = 100
        try f.read(into: buffer, frameCount: 7)
        XCTAssertEqual(buffer.frameLength, 7, file: file, line: line)
        XCTAssertEqual(f.framePosition, 107, file: file, line: line)
    }

    private func settings(bits: Int, float: Bool) -> [String: Any] {
        [AVFormatIDKey: kAudioFormatLinearPCM, AVSampleRateKey: Self.rate, AVNumberOfChannelsKey: 2,
         AVLinearPCMBitDepthKey: bits, AVLinearPCMIsFloatKey: float]
    }

    func testWAVInt16() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("sine.wav")
        let written = try writeSine(url, settings: settings(bits: 16, float: false))
        XCTAssertEqual(written.fileFormat.commonFormat, .pcmFormatInt16)
        try readBackInPieces(url, tolerance: Self.int16Tolerance)
        XCTAssertEqual(try AudioFile(forReading: url).fileFormat.commonFormat, .pcmFormatInt16)
    }

    func testWAVFloat32() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("sine.wav")
        try writeSine(url, settings: settings(bits: 32, float: true))
        // Float32 stores the written floats exactly: only the Float rounding of the formula remains.
        try readBackInPieces(url, tolerance: 3e-8)
        XCTAssertEqual(try AudioFile(forReading: url).fileFormat.commonFormat, .pcmFormatFloat32)
    }

    func testFLACInt16() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("sine.flac")
        try writeSine(url, settings: settings(bits: 16, float: false))
        try readBackInPieces(url, tolerance: Self.int16Tolerance)
        XCTAssertEqual(try AudioFile(forReading: url).fileFormat.commonFormat, .pcmFormatInt16)
    }

    func testFLACWithFLACFormatIDAnd24Bits() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("sine.flac")
        try writeSine(url, settings: [AVFormatIDKey: kAudioFormatFLAC, AVSampleRateKey: Self.rate, AVNumberOfChannelsKey: 2,
                                      AVLinearPCMBitDepthKey: 24])
        try readBackInPieces(url, tolerance: 0.5 / 8_388_608 + 3e-8)
        XCTAssertEqual(try AudioFile(forReading: url).fileFormat.commonFormat, .otherFormat)
    }

    func testAIFFInt16AndFloat32() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try writeSine(dir.appendingPathComponent("sine.aiff"), settings: settings(bits: 16, float: false))
        try readBackInPieces(dir.appendingPathComponent("sine.aiff"), tolerance: Self.int16Tolerance)
        try writeSine(dir.appendingPathComponent("sine.aif"), settings: settings(bits: 32, float: true))
        try readBackInPieces(dir.appendingPathComponent("sine.aif"), tolerance: 3e-8)
    }

    func testOggVorbisKeepsLengthAndLevel() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("sine.ogg")
        try writeSine(url, settings: [AVSampleRateKey: Self.rate, AVNumberOfChannelsKey: 2])
        let f = try AudioFile(forReading: url)
        XCTAssertEqual(f.length, AudioFramePosition(Self.frames))
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: f.processingFormat, frameCapacity: AudioFrameCount(Self.frames)))
        try f.read(into: buffer)
        XCTAssertEqual(Int(buffer.frameLength), Self.frames)
        // Lossy: compare the RMS of the middle with the sine's (amplitude / √2).
        let data = try XCTUnwrap(buffer.floatChannelData)
        for (c, amplitude) in [(0, 0.5), (1, 0.25)] {
            var sum = 0.0
            for i in 2000..<8000 { sum += Double(data[c][i]) * Double(data[c][i]) }
            XCTAssertEqual((sum / 6000).squareRoot(), amplitude / 2.0.squareRoot(), accuracy: amplitude * 0.05)
        }
    }

    func testInt16InterleavedProcessingFormatReadsTheStoredIntegers() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("sine.wav")
        try writeSine(url, settings: settings(bits: 16, float: false))
        let floats = try AudioFile(forReading: url)
        let ints = try AudioFile(forReading: url, commonFormat: .pcmFormatInt16, interleaved: true)
        XCTAssertEqual(ints.processingFormat.commonFormat, .pcmFormatInt16)
        XCTAssertTrue(ints.processingFormat.isInterleaved)
        let fb = try XCTUnwrap(AudioPCMBuffer(pcmFormat: floats.processingFormat, frameCapacity: 500))
        let ib = try XCTUnwrap(AudioPCMBuffer(pcmFormat: ints.processingFormat, frameCapacity: 500))
        floats.framePosition = 2000
        ints.framePosition = 2000
        try floats.read(into: fb)
        try ints.read(into: ib)
        XCTAssertEqual(ib.frameLength, 500)
        let f = try XCTUnwrap(fb.floatChannelData), s = try XCTUnwrap(ib.int16ChannelData)[0]
        for i in 0..<500 {
            for c in 0..<2 {
                XCTAssertEqual(Double(s[i * 2 + c]), Double(f[c][i]) * 32768, "frame \(i) channel \(c)")
                XCTAssertEqual(Double(s[i * 2 + c]) / 32768, Self.sine(c, 2000 + i), accuracy: Self.int16Tolerance)
            }
        }
    }

    func testSoundfileReadsTheSameSamples() throws {
        // python3's soundfile (libsndfile through its own binding, numpy) as an independent reader.
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for (name, bits, float, tolerance) in [("x.wav", 16, false, Self.int16Tolerance), ("x.flac", 16, false, Self.int16Tolerance),
                                               ("x.aiff", 32, true, 3e-8)] {
            let url = dir.appendingPathComponent(name)
            try writeSine(url, settings: settings(bits: bits, float: float))
            let script = """
                import sys, numpy as np, soundfile as sf
                d, sr = sf.read(sys.argv[1], dtype='float64', always_2d=True)
                n = np.arange(d.shape[0])
                ref = np.stack([0.5 * np.sin(2 * np.pi * 440 * n / sr), 0.25 * np.sin(2 * np.pi * 1000 * n / sr)], axis=1)
                print(sr, d.shape[0], d.shape[1], repr(float(np.max(np.abs(d - ref)))), sf.info(sys.argv[1]).subtype)
                """
            let text = try ReferenceScript.run(code: script, arguments: [url.path]).text
            let fields = text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            XCTAssertEqual(fields.count, 5, text)
            guard fields.count == 5 else { continue }
            XCTAssertEqual(Double(fields[0]), Self.rate, name)
            XCTAssertEqual(Int(fields[1]), Self.frames, name)
            XCTAssertEqual(Int(fields[2]), 2, name)
            XCTAssertLessThanOrEqual(try XCTUnwrap(Double(fields[3])), tolerance, name)
            XCTAssertEqual(fields[4], float ? "FLOAT" : "PCM_16", name)
        }
    }

    func testWritingWithAFormatsSettings() throws {
        // The AVAudioEngine idiom: AudioFile(forWriting: url, settings: someNode.outputFormat(forBus: 0).settings).
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("tap.wav")
        let standard = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: Self.rate, channels: 2))
        try writeSine(url, settings: standard.settings)
        try readBackInPieces(url, tolerance: 3e-8)
        let f = try AudioFile(forReading: url)
        XCTAssertEqual(f.fileFormat.commonFormat, .pcmFormatFloat32)
        XCTAssertTrue(f.fileFormat.isInterleaved)
    }

    func testMissingAndGarbageFilesThrowNamingTheFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let missing = dir.appendingPathComponent("nothing-here.wav")
        XCTAssertThrowsError(try AudioFile(forReading: missing)) { error in
            XCTAssertTrue("\(error)".hasPrefix(missing.path + ": cannot open"), "\(error)")
            XCTAssertEqual("\(error)".split(separator: "\n").count, 1)
        }
        let garbage = dir.appendingPathComponent("garbage.wav")
        try Data("this is not a sound file, just text".utf8).write(to: garbage)
        XCTAssertThrowsError(try AudioFile(forReading: garbage)) { error in
            XCTAssertTrue("\(error)".hasPrefix(garbage.path + ": cannot open"), "\(error)")
        }
    }

    func testWritingErrors() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let wav = dir.appendingPathComponent("a.wav")
        XCTAssertThrowsError(try AudioFile(forWriting: wav, settings: [AVNumberOfChannelsKey: 2])) { error in
            XCTAssertEqual("\(error)", "\(wav.path): invalid settings: AVSampleRateKey is missing or not a positive number")
        }
        XCTAssertThrowsError(try AudioFile(forWriting: wav, settings: [AVSampleRateKey: 48000, AVNumberOfChannelsKey: 2,
                                                                        AVLinearPCMBitDepthKey: 12])) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(wav.path): invalid settings: AVLinearPCMBitDepthKey 12"), "\(error)")
        }
        let flac = dir.appendingPathComponent("a.flac")
        XCTAssertThrowsError(try AudioFile(forWriting: flac, settings: settings(bits: 32, float: true))) { error in
            XCTAssertEqual(error as? AudioFileError, .unsupportedSampleType(path: flac.path, sampleType: .float32))
        }
        XCTAssertThrowsError(try AudioFile(forWriting: wav, settings: [AVFormatIDKey: kAudioFormatFLAC, AVSampleRateKey: 48000,
                                                                        AVNumberOfChannelsKey: 1])) { error in
            XCTAssertEqual("\(error)", "\(wav.path): invalid settings: kAudioFormatFLAC needs a .flac file")
        }
        let unknown = dir.appendingPathComponent("a.xyz")
        XCTAssertThrowsError(try AudioFile(forWriting: unknown, settings: settings(bits: 16, float: false))) { error in
            XCTAssertEqual(error as? AudioFileError, .unsupportedFileType(path: unknown.path))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: flac.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: unknown.path))
    }

    func testBufferFormatAndModeMismatchThrow() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("m.wav")
        let writer = try AudioFile(forWriting: url, settings: settings(bits: 16, float: false))
        let mono = try XCTUnwrap(AudioPCMBuffer(pcmFormat: try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: Self.rate,
                                                                                     channels: 1)), frameCapacity: 10))
        mono.frameLength = 10
        XCTAssertThrowsError(try writer.write(from: mono)) { error in
            guard case .formatMismatch(let path, _)? = error as? AudioFileError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, url.path)
        }
        let stereo = try XCTUnwrap(AudioPCMBuffer(pcmFormat: writer.processingFormat, frameCapacity: 10))
        XCTAssertThrowsError(try writer.read(into: stereo)) { error in
            XCTAssertEqual("\(error)", "\(url.path): not open for reading (opened for writing)")
        }
        stereo.frameLength = 10
        try writer.write(from: stereo)
        writer.close()
        XCTAssertFalse(writer.isOpen)
        XCTAssertThrowsError(try writer.write(from: stereo)) { error in
            XCTAssertEqual("\(error)", "\(url.path): not open for writing (closed)")
        }
        let reader = try AudioFile(forReading: url)
        XCTAssertEqual(reader.length, 10)
        XCTAssertThrowsError(try reader.write(from: stereo))
        XCTAssertThrowsError(try reader.read(into: mono))
    }

    func testFileIsFinishedWhenReleased() throws {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("r.wav")
        do {
            let f = try AudioFile(forWriting: url, settings: settings(bits: 16, float: false))
            let b = try XCTUnwrap(AudioPCMBuffer(pcmFormat: f.processingFormat, frameCapacity: 123))
            b.frameLength = 123
            try f.write(from: b)
        }
        XCTAssertEqual(try AudioFile(forReading: url).length, 123)
    }
}
