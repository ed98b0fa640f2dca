// The README's examples: each is its AVAudioEngine original with the prefix dropped, and each runs.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class ExamplesTests: XCTestCase {
    static let names = ["SoundMeter", "BackToBack", "Synth", "Repatch", "GraphCheck", "SpeechConverter"]
    /// The package's root (this file is Tests/AudioGraphKitTests/ExamplesTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    var server: PulseTestServer?

    override func tearDown() {
        server?.stop()
        server = nil
    }

    /// The built example (`swift build` builds them; `make test` does that first).
    func binary(_ name: String) throws -> String {
        let path = Self.root.appendingPathComponent(".build/debug/\(name)").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            // `make test` (and so CI) builds them and sets AG_REQUIRE_EXAMPLES: there a missing one fails.
            if ProcessInfo.processInfo.environment["AG_REQUIRE_EXAMPLES"] == "1" {
                XCTFail("example \(name) is not built at \(path)")
            }
            throw XCTSkip("example \(name) is not built at \(path): run `swift build` (make test does)")
        }
        return path
    }

    /// Runs an example to completion; returns its exit status and standard output.
    func run(_ name: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 30) throws
        -> (status: Int32, output: String) {
        let out = NSTemporaryDirectory() + "example-\(name)-\(getpid()).txt"
        defer { unlink(out) }
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        let child = try ChildProcess(executable: try binary(name), arguments: arguments, environment: env,
                                     standardOutput: out, standardError: out)
        let status = child.wait(timeout: timeout) ?? { child.terminate(signal: SIGKILL); return -1 }()
        return (status, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    /// Lines of code: not blank, not a comment.
    static func codeLines(_ text: String) -> Int {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("//") }.count
    }

    // MARK: The AVAudioEngine originals

    func testEachExampleIsItsAVAudioEngineOriginalWithThePrefixDropped() throws {
        for name in Self.names {
            let dir = Self.root.appendingPathComponent("Examples/\(name)")
            let apple = try String(contentsOf: dir.appendingPathComponent("Apple.swift.txt"), encoding: .utf8)
            let ours = try String(contentsOf: dir.appendingPathComponent("main.swift"), encoding: .utf8)
            let ratio = Double(Self.codeLines(ours)) / Double(Self.codeLines(apple))
            print("example \(name): \(Self.codeLines(ours)) lines, AVAudioEngine original \(Self.codeLines(apple)) "
                  + String(format: "(%.2fx)", ratio))
            XCTAssertLessThanOrEqual(ratio, 1.3, name)
            // Dropping the prefix: `import AVFoundation` becomes `import AudioGraphKit`, `AVAudio…` `Audio…`.
            let converted = apple.replacingOccurrences(of: "import AVFoundation", with: "import AudioGraphKit")
                .replacingOccurrences(of: #"\bAV(?=Audio)"#, with: "", options: .regularExpression)
            if name == "Repatch" {
                // The one place it adds to the original: the re-patch is one change list (AVAudioEngine has none).
                let added = Set(ours.split(separator: "\n")).subtracting(converted.split(separator: "\n"))
                XCTAssertLessThanOrEqual(added.count, 6, "\(name) adds: \(added)")
            } else {
                XCTAssertEqual(converted, ours, "\(name) is not its original with the prefix dropped")
            }
        }
    }

    // MARK: Running them

    func testGraphCheckPassesOffline() throws {
        let r = try run("GraphCheck", [])
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.output.contains("PASS"), r.output)
        // The 1 kHz low-pass: 100 Hz passes at 0 dB, 8 kHz is down by the cookbook response.
        XCTAssertTrue(r.output.contains("100 Hz: -0.00 dB") || r.output.contains("100 Hz: 0.00 dB"), r.output)
    }

    /// A private PulseAudio server, and the environment that makes it the examples' default.
    func startServer() throws -> [String: String] {
        let s = try PulseTestServer()
        server = s
        var env = s.environment
        env["PULSE_SINK"] = s.sinkName
        env["PULSE_SOURCE"] = s.monitorSourceName
        return env
    }

    func testSynthRendersTheVoiceOfflineAndPlaysTheSameSamplesLive() throws {
        let env = try startServer()
        let s = try XCTUnwrap(server)
        let file = s.directory.appendingPathComponent("synth.wav")
        let raw = s.directory.appendingPathComponent("synth.raw")
        let recorder = try s.startRecording(source: s.monitorSourceName, to: raw)
        usleep(300_000)
        let r = try run("Synth", [file.path, "1"], environment: env)
        usleep(300_000)
        s.stopChild(recorder)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.output.contains("rendered 48000 frames"), r.output)
        // The file: 0.25·sin(phase) through the mixer's mono pan law (0.70710678 each side).
        let f = try AudioFile(forReading: file)
        XCTAssertEqual(f.length, 48000)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: f.processingFormat, frameCapacity: 48000))
        try f.read(into: buffer)
        let left = Array(UnsafeBufferPointer(start: buffer.floatChannelData![0], count: 48000))
        var phase = 0.0, worst: Float = 0
        for n in 0..<48000 {
            worst = max(worst, abs(left[n] - Float(0.25 * sin(phase)) * Float(0.70710678)))
            phase += 2 * Double.pi * 440 / 48000
        }
        XCTAssertLessThan(worst, 1e-6)
        // Live: what reached the sink equals the offline file, from its first sound on.
        let recorded = try PulseTestServer.readRawFloat32(raw)
        let first = try XCTUnwrap((0..<(recorded.count / 2)).first { recorded[2 * $0] != 0 }, "silent recording")
        var matching = 0
        while first + matching < recorded.count / 2, matching + 1 < 48000, recorded[2 * (first + matching)] == left[matching + 1] {
            matching += 1
        }
        print("Synth example: offline worst error \(worst); live \(matching) frames bit-identical to the offline file")
        XCTAssertGreaterThan(matching, 40000)
    }

    func testSoundMeterMeasuresATonePlayedIntoTheSource() throws {
        let env = try startServer()
        let s = try XCTUnwrap(server)
        // A 0.4-amplitude tone: RMS 20·log10(0.4/√2) = -10.97 dBFS, peak -7.96 dBFS.
        let tone = s.directory.appendingPathComponent("tone.raw")
        var wave = [Float](repeating: 0, count: 2 * 96000)
        for n in 0..<96000 {
            let v = Float(0.4 * sin(2 * Double.pi * 1000 * Double(n) / 48000))
            wave[2 * n] = v
            wave[2 * n + 1] = v
        }
        try wave.withUnsafeBytes { try Data($0).write(to: tone) }
        let meter = try ChildProcess(executable: try binary("SoundMeter"), arguments: ["2.5"],
                                     environment: ProcessInfo.processInfo.environment.merging(env) { $1 },
                                     standardOutput: s.directory.appendingPathComponent("meter.txt").path)
        usleep(500_000)
        let player = try s.startPlaying(file: tone)
        _ = player.wait(timeout: 5)
        XCTAssertEqual(meter.wait(timeout: 10), 0)
        let lines = try String(contentsOf: s.directory.appendingPathComponent("meter.txt"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let toneLines = lines.filter { $0.contains("rms  -11.0 dBFS") && $0.contains("peak   -8.0 dBFS") }
        print("SoundMeter example: \(lines.count) lines, \(toneLines.count) at the tone's level")
        XCTAssertGreaterThan(toneLines.count, 10, lines.joined(separator: "\n"))
    }

    /// The microphone-to-speech converter (Apple's tap + AVAudioConverter pattern, built in the
    /// Swift 6 and the Swift 5 language modes): a 1 kHz tone at 0.4 played into the source comes
    /// out of both builds as a 16 kHz Int16 mono file at the tone's frequency and level.
    func testSpeechConverterWritesTheInputAt16kHzInt16Mono() throws {
        for name in ["SpeechConverter", "SpeechConverterSwift5"] {
            let env = try startServer()
            let s = try XCTUnwrap(server)
            let tone = s.directory.appendingPathComponent("tone.raw")
            var wave = [Float](repeating: 0, count: 2 * 96000)
            for n in 0..<96000 {
                let v = Float(0.4 * sin(2 * Double.pi * 1000 * Double(n) / 48000))
                wave[2 * n] = v
                wave[2 * n + 1] = v
            }
            try wave.withUnsafeBytes { try Data($0).write(to: tone) }
            let file = s.directory.appendingPathComponent("speech.wav")
            let converter = try ChildProcess(executable: try binary(name), arguments: [file.path, "3"],
                                             environment: ProcessInfo.processInfo.environment.merging(env) { $1 },
                                             standardOutput: s.directory.appendingPathComponent("out.txt").path)
            usleep(500_000)
            let player = try s.startPlaying(file: tone)
            _ = player.wait(timeout: 5)
            XCTAssertEqual(converter.wait(timeout: 15), 0, name)
            let output = (try? String(contentsOf: s.directory.appendingPathComponent("out.txt"), encoding: .utf8)) ?? ""
            XCTAssertTrue(output.contains("wrote"), output)
            // Read back independently of the engine's reader.
            let wav = try WAVFile(contentsOf: file)
            XCTAssertEqual(wav.sampleRate, 16000)
            XCTAssertEqual(wav.sampleType, .int16)
            XCTAssertEqual(wav.channelCount, 1)
            XCTAssertGreaterThan(wav.frameCount, 16000 * 2, "\(name): about 3 s at 16 kHz")
            // The loudest 0.5 s (the tone): 1 kHz at RMS 0.4/√2 (-10.97 dBFS).
            let samples = wav.samples[0]
            let window = 8000
            guard samples.count > 2 * window else { continue }
            // The half second a 1 kHz sine explains best (a wrong rate would leave it in the
            // residual; a starved machine may drop a tap buffer elsewhere in the recording).
            let fits = stride(from: 0, to: samples.count - window, by: 800).map { start in
                (start, ToneFit(samples[start..<(start + window)], sampleRate: 16000, frequencies: [1000]))
            }
            // Windows of digital silence (before the tone: the take now starts within ~0.1 s of
            // launch, the tone at 0.5 s) have no THD+N (NaN), which must not win the comparison.
            guard let (start, fit) = fits.filter({ $0.1.thdPlusNoiseDB.isFinite })
                .min(by: { $0.1.thdPlusNoiseDB < $1.1.thdPlusNoiseDB }) else {
                XCTFail("\(name): no window holds the tone"); continue
            }
            let part = Array(samples[start..<(start + window)])
            let rms = (part.reduce(0) { $0 + $1 * $1 } / Double(window)).squareRoot()
            print("\(name) example: \(wav.frameCount) frames, tone RMS \(20 * log10(rms)) dBFS, 1 kHz amplitude "
                  + "\(fit.tones[0].amplitude), THD+N \(fit.thdPlusNoiseDB) dB")
            XCTAssertEqual(20 * log10(rms), -10.97, accuracy: 0.2, name)
            XCTAssertEqual(fit.tones[0].amplitude, 0.4, accuracy: 0.01, name)
            XCTAssertLessThan(fit.thdPlusNoiseDB, -60, name)
            server?.stop()
            server = nil
        }
    }

    func testBackToBackPlaysTwoFilesGaplesslyAndReportsCompletions() throws {
        let env = try startServer()
        let s = try XCTUnwrap(server)
        let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 2))
        var expected: [Float] = []
        for (i, frequency) in [440.0, 660.0].enumerated() {
            let url = s.directory.appendingPathComponent("part\(i).wav")
            let file = try AudioFile(forWriting: url, settings: format.settings)
            let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 14400))
            buffer.frameLength = 14400
            for n in 0..<14400 {
                let v = Float(0.3 * sin(2 * Double.pi * frequency * Double(n) / 48000))
                buffer.floatChannelData![0][n] = v
                buffer.floatChannelData![1][n] = v
                expected.append(v)
            }
            try file.write(from: buffer)
            file.close()
        }
        let raw = s.directory.appendingPathComponent("b2b.raw")
        let recorder = try s.startRecording(source: s.monitorSourceName, to: raw)
        usleep(300_000)
        let r = try run("BackToBack", [s.directory.appendingPathComponent("part0.wav").path,
                                       s.directory.appendingPathComponent("part1.wav").path], environment: env)
        usleep(200_000)
        s.stopChild(recorder)
        XCTAssertEqual(r.status, 0, r.output)
        let lines = r.output.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines, ["first consumed", "second played back"], r.output)
        let recorded = try PulseTestServer.readRawFloat32(raw)
        let first = try XCTUnwrap((0..<(recorded.count / 2)).first { recorded[2 * $0] != 0 }, "silent recording")
        var matching = 0
        while first + matching < recorded.count / 2, matching + 1 < expected.count, recorded[2 * (first + matching)] == expected[matching + 1] {
            matching += 1
        }
        print("BackToBack example: \(matching + 1) of \(expected.count) frames bit-identical across the join")
        XCTAssertEqual(matching + 1, expected.count, "the two files did not play back to back, gaplessly")
    }

    func testRepatchMovesTheSynthFromTheDelayToTheLowPass() throws {
        let env = try startServer()
        let s = try XCTUnwrap(server)
        let raw = s.directory.appendingPathComponent("repatch.raw")
        let recorder = try s.startRecording(source: s.monitorSourceName, to: raw)
        usleep(300_000)
        let r = try run("Repatch", ["1"], environment: env)
        usleep(200_000)
        s.stopChild(recorder)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.output.contains("re-patched at frame"), r.output)
        let recorded = try PulseTestServer.readRawFloat32(raw)
        let left = stride(from: 0, to: recorded.count, by: 2).map { Double(recorded[$0]) }
        let first = try XCTUnwrap(left.firstIndex { $0 != 0 })
        guard left.count > first + 91200 else { return XCTFail("recorded \(left.count - first) frames, expected 2 s") }
        // A 220 Hz square: its 11th harmonic (2420 Hz) is strong through the delay, gone behind the 500 Hz low-pass.
        let before = Array(left[(first + 24000)..<(first + 43200)]), after = Array(left[(first + 72000)..<(first + 91200)])
        let h11Before = ToneFit(before, sampleRate: 48000, frequencies: [220, 2420]).amplitude(at: 2420) ?? 0
        let h11After = ToneFit(after, sampleRate: 48000, frequencies: [220, 2420]).amplitude(at: 2420) ?? 1
        print("Repatch example: 2420 Hz at \(h11Before) before, \(h11After) after")
        XCTAssertGreaterThan(h11Before, 0.005)
        XCTAssertLessThan(h11After, h11Before / 30)
    }
}
