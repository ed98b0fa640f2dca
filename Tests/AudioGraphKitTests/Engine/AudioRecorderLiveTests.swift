// AudioRecorder (AVAudioRecorder's shape) recording a private PulseAudio server's input: exact durations, formats, meters.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioRecorderLiveTests: DefaultPulseServerTestCase {
    private final class Delegate: AudioRecorderDelegate {
        let finished: XCTestExpectation
        /// Fulfilled by the calls after the first, in order.
        var later: [XCTestExpectation] = []
        var flags: [Bool] = []
        init(_ e: XCTestExpectation) { finished = e }
        func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool) {
            flags.append(flag)
            if flags.count == 1 { finished.fulfill() } else if !later.isEmpty { later.removeFirst().fulfill() }
        }
    }

    /// Plays `seconds` of a 1 kHz tone at 0.4 into the sink (whose monitor the recorders record).
    private func playTone(seconds: Double) throws -> ChildProcess {
        let tone = server.directory.appendingPathComponent("tone.raw")
        let wave = (0..<Int(seconds * 48000)).flatMap { n in Array(repeating: sineSample(Int64(n), frequency: 1000, rate: 48000, amplitude: 0.4), count: 2) }
        try wave.withUnsafeBytes { try Data($0).write(to: tone) }
        return try server.startPlaying(file: tone)
    }

    /// record(forDuration:) to a 16 kHz Int16 mono WAV writes exactly 16 000 frames of the input,
    /// converted (the tone at 1 kHz and its level), and tells the delegate.
    func testRecordForDurationWritesExactlyThatManyFrames() throws {
        let url = server.directory.appendingPathComponent("speech.wav")
        let recorder = try AudioRecorder(url: url, settings: [AVFormatIDKey: kAudioFormatLinearPCM, AVSampleRateKey: 16000,
                                                              AVNumberOfChannelsKey: 1, AVLinearPCMBitDepthKey: 16])
        recorder.inputNode.setDevice(server.monitorSourceName)
        let delegate = Delegate(expectation(description: "finished"))
        recorder.delegate = delegate
        let player = try playTone(seconds: 3)
        usleep(300_000)
        XCTAssertTrue(recorder.record(forDuration: 1.0))
        XCTAssertTrue(recorder.isRecording)
        wait(for: [delegate.finished], timeout: 5)
        _ = player.wait(timeout: 5)
        XCTAssertEqual(delegate.flags, [true])
        XCTAssertFalse(recorder.isRecording)
        // Apple: "The value of this property is 0 when you call it on a stopped audio recorder."
        XCTAssertEqual(recorder.currentTime, 0)
        let wav = try WAVFile(contentsOf: url)
        XCTAssertEqual(wav.sampleRate, 16000)
        XCTAssertEqual(wav.sampleType, .int16)
        XCTAssertEqual(wav.channelCount, 1)
        XCTAssertEqual(wav.frameCount, 16000)
        guard wav.frameCount >= 15000 else { return }
        // The converter's start-up (its first frames) aside, the tone at its level.
        // The best quarter second after the converter's start-up (a starved machine may drop a
        // tap buffer; the file still holds exactly 16 000 frames).
        let fit = stride(from: 4000, to: 12000, by: 400).map { ToneFit(wav.samples[0][$0..<($0 + 4000)], sampleRate: 16000, frequencies: [1000]) }
            .filter { $0.thdPlusNoiseDB.isFinite }.min { $0.thdPlusNoiseDB < $1.thdPlusNoiseDB }!
        print("AudioRecorder: \(wav.frameCount) frames at 16 kHz; 1 kHz at \(fit.tones[0].amplitude), THD+N \(fit.thdPlusNoiseDB) dB")
        XCTAssertEqual(fit.tones[0].amplitude, 0.4, accuracy: 0.005)
        XCTAssertLessThan(fit.thdPlusNoiseDB, -60)
    }

    /// stop() on a recorder whose record(forDuration:) already ended reports nothing (once per
    /// recording, as AVAudioRecorder); a new recording then reports its own end, successfully.
    /// The delegate queue is serial, so a spurious report from stop() would come before it.
    func testStopAfterTheDurationEndedDoesNotReportAgain() throws {
        let url = server.directory.appendingPathComponent("twice.wav")
        let recorder = try AudioRecorder(url: url, settings: [AVSampleRateKey: 16000, AVNumberOfChannelsKey: 1])
        recorder.inputNode.setDevice(server.monitorSourceName)
        let delegate = Delegate(expectation(description: "first"))
        let second = expectation(description: "second")
        delegate.later = [second]
        recorder.delegate = delegate
        XCTAssertTrue(recorder.record(forDuration: 0.2))
        wait(for: [delegate.finished], timeout: 5)
        recorder.stop()
        recorder.stop()
        XCTAssertTrue(recorder.record(forDuration: 0.2))
        XCTAssertGreaterThanOrEqual(recorder.currentTime, 0)
        wait(for: [second], timeout: 5)
        XCTAssertEqual(delegate.flags, [true, true])
        XCTAssertEqual(try WAVFile(contentsOf: url).frameCount, 3200)
    }

    /// AAC in .m4a (iOS's default recording settings): record, meters of the input, stop; the
    /// file decodes to the tone.
    func testAACRecordingWithMeters() throws {
        let url = server.directory.appendingPathComponent("memo.m4a")
        let recorder = try AudioRecorder(url: url, settings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 44100,
                                                              AVNumberOfChannelsKey: 2,
                                                              AVEncoderAudioQualityKey: AudioQuality.high.rawValue])
        recorder.inputNode.setDevice(server.monitorSourceName)
        recorder.isMeteringEnabled = true
        let delegate = Delegate(expectation(description: "finished"))
        recorder.delegate = delegate
        let player = try playTone(seconds: 2)
        usleep(300_000)
        XCTAssertTrue(recorder.record())
        usleep(1_000_000)
        recorder.updateMeters()
        let average = recorder.averagePower(forChannel: 0), peak = recorder.peakPower(forChannel: 1)
        let recorded = recorder.currentTime
        recorder.stop()
        XCTAssertEqual(recorder.currentTime, 0, "0 when stopped, as on Apple's platforms")
        wait(for: [delegate.finished], timeout: 5)
        _ = player.wait(timeout: 5)
        print("AudioRecorder AAC: \(recorded) s; meters average \(average) dBFS, peak \(peak) dBFS")
        // RMS 20·log10(0.4/√2) = -10.97 dBFS, peak -7.96 dBFS.
        XCTAssertEqual(average, -10.97, accuracy: 0.1)
        XCTAssertEqual(peak, -7.96, accuracy: 0.1)
        // Frames written by the tap thread before stop(): about the second recorded (less when
        // the machine starves the tap thread; stop() finishes with what was delivered).
        XCTAssertGreaterThan(recorded, 0.3)
        XCTAssertLessThan(recorded, 1.3)
        let file = try AudioFile(forReading: url)
        XCTAssertEqual(file.processingFormat.sampleRate, 44100)
        XCTAssertEqual(file.processingFormat.channelCount, 2)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: AudioFrameCount(file.length)))
        try file.read(into: buffer)
        let left = Array(UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength)))
        XCTAssertGreaterThan(left.count, 13230, "at least 0.3 s recorded")
        guard left.count > 13230 else { return }
        let fit = try XCTUnwrap(stride(from: 4410, to: left.count - 8820, by: 2205).compactMap {
            ToneFit(dominantToneOf: left[$0..<($0 + 4410)], sampleRate: 44100)
        }.filter { $0.thdPlusNoiseDB.isFinite }.min { $0.thdPlusNoiseDB < $1.thdPlusNoiseDB })
        XCTAssertEqual(fit.tones[0].frequency, 1000, accuracy: 1)
        XCTAssertEqual(fit.tones[0].amplitude, 0.4, accuracy: 0.02)
        XCTAssertTrue(recorder.deleteRecording())
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path))
    }

    /// Settings that cannot be recorded throw at init, naming the file.
    func testUnrecordableSettingsThrow() {
        XCTAssertThrowsError(try AudioRecorder(url: URL(fileURLWithPath: "/tmp/x.wav"),
                                               settings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 44100, AVNumberOfChannelsKey: 1])) {
            XCTAssertTrue("\($0)".contains("/tmp/x.wav"), "\($0)")
        }
        XCTAssertThrowsError(try AudioRecorder(url: URL(fileURLWithPath: "/tmp/y.m4a"), settings: [AVFormatIDKey: kAudioFormatMPEG4AAC]))
    }

    private final class FailureDelegate: AudioRecorderDelegate {
        let encodeError: XCTestExpectation, finished: XCTestExpectation
        var error: Error?
        var flags: [Bool] = []
        init(_ a: XCTestExpectation, _ b: XCTestExpectation) { encodeError = a; finished = b }
        func audioRecorderEncodeErrorDidOccur(_ recorder: AudioRecorder, error: Error?) {
            self.error = error
            encodeError.fulfill()
        }
        func audioRecorderDidFinishRecording(_ recorder: AudioRecorder, successfully flag: Bool) {
            flags.append(flag)
            finished.fulfill()
        }
    }

    /// A full disk (the file name linked to /dev/full) while recording MP3: the delegate hears
    /// the encode error (one line, naming the file), then the end of the recording, not
    /// successful — even though nothing was left to write when it stopped.
    func testAFullDiskIsReportedAndTheRecordingIsNotSuccessful() throws {
        let url = server.directory.appendingPathComponent("full.mp3")
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "/dev/full")
        let recorder = try AudioRecorder(url: url, settings: [AVFormatIDKey: kAudioFormatMPEGLayer3, AVSampleRateKey: 44100,
                                                              AVNumberOfChannelsKey: 2])
        recorder.inputNode.setDevice(server.monitorSourceName)
        let delegate = FailureDelegate(expectation(description: "encode error"), expectation(description: "finished"))
        recorder.delegate = delegate
        XCTAssertTrue(recorder.record())
        wait(for: [delegate.encodeError, delegate.finished], timeout: 10, enforceOrder: true)
        let text = delegate.error.map { "\($0)" } ?? "no error"
        print("AudioRecorder on a full disk: \(text); finished \(delegate.flags)")
        XCTAssertTrue(text.contains(url.path) && !text.contains("\n"), text)
        XCTAssertEqual(delegate.flags, [false])
        XCTAssertFalse(recorder.isRecording)
    }

    /// A record() that fails (the engine cannot open its input) leaves no tap and no converter
    /// behind: after the device is fixed and the input made mono (channel map), the next
    /// record converts from the input as it is then and records the tone.
    func testAFailedRecordLeavesNothingBehindAndTheNextStartsAfresh() throws {
        let url = server.directory.appendingPathComponent("retry.wav")
        let recorder = try AudioRecorder(url: url, settings: [AVSampleRateKey: 48000, AVNumberOfChannelsKey: 1])
        recorder.inputNode.setDevice("no-such-source")
        XCTAssertFalse(recorder.record())
        XCTAssertFalse(recorder.isRecording)
        recorder.inputNode.setDevice(server.monitorSourceName)
        recorder.inputNode.channelMap = [1]
        let delegate = Delegate(expectation(description: "finished"))
        recorder.delegate = delegate
        let player = try playTone(seconds: 3)
        usleep(300_000)
        XCTAssertTrue(recorder.record(forDuration: 0.5))
        wait(for: [delegate.finished], timeout: 5)
        _ = player.wait(timeout: 5)
        XCTAssertEqual(delegate.flags, [true])
        let wav = try WAVFile(contentsOf: url)
        XCTAssertEqual(wav.frameCount, 24000)
        guard wav.frameCount == 24000 else { return }
        let fit = stride(from: 2400, to: 19200, by: 2400).map { ToneFit(wav.samples[0][$0..<($0 + 4800)], sampleRate: 48000, frequencies: [1000]) }
            .min { $0.thdPlusNoiseDB < $1.thdPlusNoiseDB }!
        print("AudioRecorder after a failed start: 1 kHz at \(fit.tones[0].amplitude), THD+N \(fit.thdPlusNoiseDB) dB")
        XCTAssertEqual(fit.tones[0].amplitude, 0.4, accuracy: 0.005)
    }

    /// Settings a WAV cannot hold throw at init (as AudioFile(forWriting:) does), not first
    /// when recording starts.
    func testWAVSettingsAreCheckedAtInit() {
        for extra: [String: Any] in [[AVLinearPCMBitDepthKey: 7], [AVFormatIDKey: 0x616C_6163 as AudioFormatID]] {
            let settings = extra.merging([AVSampleRateKey: 48000, AVNumberOfChannelsKey: 1]) { a, _ in a }
            let url = URL(fileURLWithPath: "/tmp/bad-\(getpid()).wav")
            XCTAssertThrowsError(try AudioFile(forWriting: url, settings: settings), "\(settings)")
            XCTAssertThrowsError(try AudioRecorder(url: url, settings: settings), "\(settings)") {
                XCTAssertTrue("\($0)".contains(url.path), "\($0)")
            }
            try? FileManager.default.removeItem(at: url)
        }
    }
}
