// AudioFile's formats, written through AudioFile and decoded independently by the ffmpeg command line (and read back).
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioFileCodecTests: XCTestCase {
    static let rate = 48_000.0
    static let frames = 96_000
    /// Left 440 Hz, right 1 kHz, both at 0.5.
    static let signal: [[Float]] = [440.0, 1000.0].map { f in
        (0..<frames).map { Float(0.5 * sin(2 * Double.pi * f * Double($0) / rate)) }
    }

    private func write(_ url: URL, settings: [String: Any]) throws {
        let file = try AudioFile(forWriting: url, settings: settings)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: AudioFrameCount(Self.frames)))
        buffer.frameLength = AudioFrameCount(Self.frames)
        for c in 0..<2 { Self.signal[c].withUnsafeBufferPointer { buffer.floatChannelData![c].update(from: $0.baseAddress!, count: Self.frames) } }
        // In odd pieces, as a recorder writes.
        var done = 0
        while done < Self.frames {
            let n = min(4_097, Self.frames - done)
            let piece = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: AudioFrameCount(n)))
            piece.frameLength = AudioFrameCount(n)
            for c in 0..<2 { piece.floatChannelData![c].update(from: buffer.floatChannelData![c] + done, count: n) }
            try file.write(from: piece)
            done += n
        }
        XCTAssertEqual(file.length, AudioFramePosition(Self.frames))
        file.close()
    }

    /// The ffmpeg command line's decoding of `url`: its rate, codec name and samples per channel.
    /// (`integers`: decoded to 32-bit integers, scaled by 2^-31 exactly; else to 32-bit floats.)
    private func ffmpegDecode(_ url: URL, integers: Bool = false) throws -> (rate: Double, codec: String, channels: [[Double]]) {
        func run(_ args: [String]) throws -> Data { try ReferenceScript.runTool(args).data }
        let probe = String(decoding: try run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                                                "stream=codec_name,sample_rate,channels", "-of", "csv=p=0", url.path]), as: UTF8.self)
        let fields = probe.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
        guard fields.count >= 3 else {
            XCTFail("ffprobe could not read \(url.lastPathComponent): \(probe)")
            return (0, "", [[], []])
        }
        let raw = try run(["ffmpeg", "-v", "error", "-i", url.path, "-f", integers ? "s32le" : "f32le",
                           "-acodec", integers ? "pcm_s32le" : "pcm_f32le", "-"])
        let floats: [Double] = integers ? raw.withUnsafeBytes { $0.bindMemory(to: Int32.self).map { Double($0) / 2_147_483_648 } }
            : raw.withUnsafeBytes { $0.bindMemory(to: Float.self).map(Double.init) }
        let channels = Int(fields[2]) ?? 2
        var perChannel = (0..<channels).map { c in stride(from: c, to: floats.count, by: channels).map { floats[$0] } }
        while perChannel.count < 2 { perChannel.append([]) }
        return (Double(fields[1]) ?? 0, fields[0], perChannel)
    }

    private func readBack(_ url: URL) throws -> [[Float]] {
        let file = try AudioFile(forReading: url)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: AudioFrameCount(file.length)))
        try file.read(into: buffer)
        return (0..<Int(file.processingFormat.channelCount)).map { Array(UnsafeBufferPointer(start: buffer.floatChannelData![$0], count: Int(buffer.frameLength))) }
    }

    /// Lossless types: ffmpeg decodes exactly the samples written (rounded to the file's integers).
    func testLosslessFormatsRoundTripExactly() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let cases: [(String, [String: Any], String, Double)] = [
            ("wav", [AVLinearPCMBitDepthKey: 16], "pcm_s16le", 32_768),
            ("wav", [AVLinearPCMIsFloatKey: true, AVLinearPCMBitDepthKey: 32], "pcm_f32le", 0),
            ("aiff", [AVLinearPCMBitDepthKey: 24], "pcm_s24be", 8_388_608),
            ("caf", [AVLinearPCMBitDepthKey: 16], "pcm_s16be", 32_768),
            ("caf", [AVLinearPCMIsFloatKey: true, AVLinearPCMBitDepthKey: 32], "pcm_f32be", 0),
            ("flac", [AVFormatIDKey: kAudioFormatFLAC, AVLinearPCMBitDepthKey: 16], "flac", 32_768),
        ]
        for (index, (ext, extra, codec, scale)) in cases.enumerated() {
            var settings: [String: Any] = [AVSampleRateKey: Self.rate, AVNumberOfChannelsKey: 2]
            settings.merge(extra) { $1 }
            let url = dir.appendingPathComponent("f\(index).\(ext)")
            try write(url, settings: settings)
            let decoded = try ffmpegDecode(url, integers: scale != 0)
            XCTAssertEqual(decoded.codec, codec, ext)
            XCTAssertEqual(decoded.rate, Self.rate)
            for c in 0..<2 {
                // Integers: round to nearest, ties to even (SampleConversion's rule).
                let expected = Self.signal[c].map { scale == 0 ? Double($0) : (Double($0) * scale).rounded(.toNearestOrEven) / scale }
                XCTAssertEqual(decoded.channels[c].count, Self.frames, ext)
                XCTAssertTrue(decoded.channels[c] == expected, "\(ext) \(codec) channel \(c) differs")
            }
            XCTAssertTrue(try readBack(url).map { $0.map(Double.init) } == decoded.channels, "\(ext): AudioFile reads what ffmpeg decodes")
        }
    }

    /// Lossy types: the length, the pitch and level of both tones (a least-squares fit at 440
    /// Hz and 1 kHz), the noise the codec adds, and the bit rate asked for. ffmpeg decodes each
    /// independently; AudioFile reads back the same length and tones.
    func testLossyFormatsKeepLengthPitchAndLevel() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let cases: [(String, [String: Any], String, Double?, Double)] = [
            // extension, settings, ffmpeg's codec, asked bit rate, worst THD+N (dB)
            ("ogg", [AVEncoderAudioQualityKey: AudioQuality.high.rawValue], "vorbis", nil, -40),
            ("opus", [AVFormatIDKey: kAudioFormatOpus, AVEncoderBitRateKey: 96_000], "opus", 96_000, -30),
            ("mp3", [AVFormatIDKey: kAudioFormatMPEGLayer3, AVEncoderBitRateKey: 128_000], "mp3", 128_000, -30),
            // FFmpeg's native AAC encoder leaves pure tones at about -21 dB THD+N at 128 kbit/s
            // (the same file as the ffmpeg command line's, checked below).
            ("m4a", [AVFormatIDKey: kAudioFormatMPEG4AAC, AVEncoderBitRateKey: 128_000], "aac", 128_000, -20),
        ]
        for (ext, extra, codec, bitRate, worst) in cases {
            var settings: [String: Any] = [AVSampleRateKey: Self.rate, AVNumberOfChannelsKey: 2]
            settings.merge(extra) { $1 }
            let url = dir.appendingPathComponent("lossy.\(ext)")
            try write(url, settings: settings)
            let decoded = try ffmpegDecode(url)
            XCTAssertEqual(decoded.codec, codec, ext)
            XCTAssertEqual(decoded.rate, Self.rate, ext)
            let ours = try readBack(url)
            print("\(ext): ffmpeg decodes \(decoded.channels[0].count) frames, AudioFile reads \(ours[0].count) (written \(Self.frames))")
            XCTAssertEqual(Double(decoded.channels[0].count), Double(Self.frames), accuracy: 1_200, "\(ext) length (ffmpeg)")
            XCTAssertEqual(Double(ours[0].count), Double(Self.frames), accuracy: 1_200, "\(ext) length (AudioFile)")
            guard decoded.channels[0].count >= 72_000, ours[0].count >= 72_000 else { continue }
            for (name, channels) in [("ffmpeg", decoded.channels), ("AudioFile", ours.map { $0.map(Double.init) })] {
                for (c, f) in [(0, 440.0), (1, 1000.0)] {
                    // A middle second, away from the codec's start and end.
                    let part = Array(channels[c][24_000..<72_000])
                    let fit = ToneFit(part, sampleRate: Self.rate, frequencies: [f])
                    let levelDB = 20 * log10(fit.tones[0].amplitude / 0.5)
                    print("\(ext) via \(name), channel \(c): \(f) Hz at \(levelDB) dB, THD+N \(fit.thdPlusNoiseDB) dB")
                    XCTAssertEqual(levelDB, 0, accuracy: 0.5, "\(ext) \(name) channel \(c) level")
                    XCTAssertLessThan(fit.thdPlusNoiseDB, worst, "\(ext) \(name) channel \(c) noise")
                }
            }
            if let bitRate {
                let bytes = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
                let measured = Double(bytes * 8) / (Double(Self.frames) / Self.rate)
                print("\(ext): asked \(bitRate) bit/s, file \(measured) bit/s")
                XCTAssertEqual(measured, bitRate, accuracy: bitRate * 0.25, "\(ext) bit rate")
            }
        }
    }

    /// AAC through AudioFile is the ffmpeg command line's `-c:a aac -b:a 128k` of the same samples,
    /// decoded sample for sample alike.
    func testAACIsWhatTheFFmpegCommandLineEncodes() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ours = dir.appendingPathComponent("ours.m4a"), wav = dir.appendingPathComponent("in.wav"), cli = dir.appendingPathComponent("cli.m4a")
        try write(ours, settings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: Self.rate, AVNumberOfChannelsKey: 2,
                                   AVEncoderBitRateKey: 128_000])
        try write(wav, settings: [AVSampleRateKey: Self.rate, AVNumberOfChannelsKey: 2, AVLinearPCMIsFloatKey: true])
        try ReferenceScript.runTool(["ffmpeg", "-v", "error", "-y", "-i", wav.path, "-c:a", "aac", "-b:a", "128k", cli.path])
        let a = try ffmpegDecode(ours).channels, b = try ffmpegDecode(cli).channels
        XCTAssertEqual(a[0].count, b[0].count)
        XCTAssertTrue(a == b, "AudioFile's AAC decodes differently from the ffmpeg command line's")
    }

    /// The recording settings of the widely copied iOS tutorial (AAC, 12 kHz mono, quality high,
    /// the format ID as `Int`): a second of 440 Hz reads back at its pitch and level.
    func testTheCommonIOSRecordingSettingsWriteAAC() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let url = dir.appendingPathComponent("recording.m4a")
        let settings: [String: Any] = [AVFormatIDKey: Int(kAudioFormatMPEG4AAC), AVSampleRateKey: 12000, AVNumberOfChannelsKey: 1,
                                       AVEncoderAudioQualityKey: AudioQuality.high.rawValue]
        let file = try AudioFile(forWriting: url, settings: settings)
        XCTAssertEqual(file.processingFormat.sampleRate, 12000)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: 12000))
        buffer.frameLength = 12000
        for n in 0..<12000 { buffer.floatChannelData![0][n] = Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 12000)) }
        try file.write(from: buffer)
        file.close()
        let decoded = try ffmpegDecode(url)
        XCTAssertEqual(decoded.codec, "aac")
        XCTAssertEqual(decoded.rate, 12000)
        guard decoded.channels[0].count >= 9000 else { return XCTFail("decoded \(decoded.channels[0].count) frames") }
        let fit = ToneFit(decoded.channels[0][3000..<9000], sampleRate: 12000, frequencies: [440])
        print("AAC 12 kHz mono: \(decoded.channels[0].count) frames, 440 Hz at \(fit.tones[0].amplitude), THD+N \(fit.thdPlusNoiseDB) dB")
        XCTAssertEqual(fit.tones[0].amplitude, 0.5, accuracy: 0.03)
        XCTAssertLessThan(fit.thdPlusNoiseDB, -20)
    }

    /// The format ID must fit the extension, as the file type holds the codec.
    func testFormatIDThatDoesNotFitTheExtensionIsRefused() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let base: [String: Any] = [AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 1]
        for (name, id) in [("a.wav", kAudioFormatMPEG4AAC), ("b.m4a", kAudioFormatLinearPCM), ("c.mp3", kAudioFormatOpus),
                           ("d.caf", kAudioFormatMPEGLayer3)] {
            var settings = base
            settings[AVFormatIDKey] = id
            XCTAssertThrowsError(try AudioFile(forWriting: dir.appendingPathComponent(name), settings: settings), name) { error in
                XCTAssertTrue("\(error)".contains(name) && "\(error)".contains("AVFormatIDKey"), "\(error)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path), "\(name) left behind")
        }
        // AAC with the format ID and no extension hint other than .m4a: as Apple's recorder settings.
        var aac = base
        aac[AVFormatIDKey] = kAudioFormatMPEG4AAC
        XCTAssertNoThrow(try AudioFile(forWriting: dir.appendingPathComponent("ok.m4a"), settings: aac))
    }

    /// An AAC file that cannot be made (no such directory; a rate the encoder refuses) throws a
    /// one-line error naming the file and frees the FFmpeg objects it had made: the heap does
    /// not keep allocations over 200 failures (each leaked its muxer and encoder state before).
    func testFailedAACOpensThrowAndFreeWhatTheyMade() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let missing = dir.appendingPathComponent("no-such-dir/memo.m4a")
        let refusedRate = dir.appendingPathComponent("odd.m4a")
        let base: [String: Any] = [AVFormatIDKey: kAudioFormatMPEG4AAC, AVNumberOfChannelsKey: 2]
        var good = base, odd = base
        good[AVSampleRateKey] = 44_100
        odd[AVSampleRateKey] = 1_000
        func failOnce() {
            XCTAssertThrowsError(try AudioFile(forWriting: missing, settings: good)) { error in
                XCTAssertTrue("\(error)".contains(missing.path) && !"\(error)".contains("\n"), "\(error)")
            }
            XCTAssertThrowsError(try AudioFile(forWriting: refusedRate, settings: odd)) { error in
                XCTAssertTrue("\(error)".contains(refusedRate.path) && !"\(error)".contains("\n"), "\(error)")
            }
        }
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive)
        for _ in 0..<10 { failOnce() }
        RealTimeScaffold.reset(controlLocks: false)
        RealTimeScaffold.trackCurrentThread(true)
        for _ in 0..<100 { failOnce() }
        RealTimeScaffold.trackCurrentThread(false)
        let kept = Int(RealTimeScaffold.current().allocations) - Int(RealTimeScaffold.current().frees)
        print("AudioFile AAC: \(RealTimeScaffold.current().allocations) allocations, \(kept) not freed over 200 failed opens")
        XCTAssertLessThan(kept, 50)
        XCTAssertFalse(FileManager.default.fileExists(atPath: refusedRate.path))
    }

    /// A full disk (a file name linked to /dev/full, whose writes fail with ENOSPC) makes the
    /// lossy encoders' writes throw a one-line error naming the file, rather than losing the
    /// sound silently (libsndfile's MP3 writes reported every frame taken); AAC fails at once.
    func testAFullDiskThrows() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for name in ["full.mp3", "full.ogg", "full.opus", "full.m4a"] {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "/dev/full")
            var failure: Error?
            do {
                let file = try AudioFile(forWriting: url, settings: [AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 2])
                let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: 48_000))
                buffer.frameLength = 48_000
                for c in 0..<2 { Self.signal[c].withUnsafeBufferPointer { buffer.floatChannelData![c].update(from: $0.baseAddress!, count: 48_000) } }
                for _ in 0..<5 where failure == nil {
                    do { try file.write(from: buffer) } catch { failure = error }
                }
                file.close()
            } catch {
                failure = error
            }
            let text = failure.map { "\($0)" } ?? "no error"
            print("AudioFile on a full disk, \(name): \(text)")
            XCTAssertTrue(text.contains(url.path) && !text.contains("\n"), "\(name): \(text)")
        }
    }
}
