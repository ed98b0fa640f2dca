// Tests of `audiograph record` against a private PulseAudio server: bit-exact capture, channel map, Ctrl-C, bad input.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

extension CommandLineTests {
    /// Two different tones, interleaved float32, `seconds` long.
    func recordTones(seconds: Double) -> [Float] {
        let count = Int(48000 * seconds)
        var interleaved = [Float](repeating: 0, count: 2 * count)
        for n in 0..<count {
            interleaved[2 * n] = Float(0.4 * sin(2 * Double.pi * 440 * Double(n) / 48000 + 0.7))
            interleaved[2 * n + 1] = Float(0.3 * sin(2 * Double.pi * 1000 * Double(n) / 48000 + 0.3))
        }
        return interleaved
    }

    func startRecord(_ arguments: [String], server: PulseTestServer, log: String) throws -> ChildProcess {
        guard let exe = CommandLineTests.executable else { throw XCTSkip("the audiograph executable is not built") }
        let env = ProcessInfo.processInfo.environment.merging(server.environment) { $1 }
        return try ChildProcess(executable: exe.path, arguments: ["record"] + arguments, environment: env,
                                standardOutput: log + ".out", standardError: log + ".err")
    }

    /// Waits until the recording's temporary exists in `dir` (the graph is initialized).
    func waitForTemporary(in dir: URL) throws {
        let end = Date().addingTimeInterval(10)
        while Date() < end {
            if try FileManager.default.contentsOfDirectory(atPath: dir.path).contains(where: { $0.contains(".partial-") }) { return }
            usleep(10_000)
        }
        XCTFail("no temporary appeared")
    }

    /// Frames from the first non-zero frame of the recording that equal the played frames (through
    /// `map`), and how many played frames the recording could hold from there.
    func compareRecording(_ recorded: [[Float]], _ played: [Float], map: [Int]) throws -> (matching: Int, available: Int) {
        let first = try XCTUnwrap(recorded[0].firstIndex { $0 != 0 }, "captured only silence")
        let available = min(recorded[0].count - first, played.count / 2)
        var matching = 0
        while matching < available,
              (0..<map.count).allSatisfy({ recorded[$0][first + matching] == played[2 * matching + map[$0]] }) {
            matching += 1
        }
        return (matching, available)
    }

    /// A tone played into the null sink and recorded from its monitor: with `--duration` (every
    /// channel in order) and stopped by SIGINT with `--channel-map 1,0` (swapped). Each file holds
    /// the played samples bit for bit, and no temporary is left.
    func testRecordsTheMonitorBitForBitWithAChannelMapAndCtrlC() throws {
        let server = try PulseTestServer()
        defer { server.stop() }
        let played = recordTones(seconds: 3)
        let raw = server.directory.appendingPathComponent("tones.raw")
        try played.withUnsafeBytes { try Data($0).write(to: raw) }

        for (map, interrupted) in [([0, 1], false), ([1, 0], true)] {
            let dir = try TestFiles.makeTemporaryDirectory(self)
            let file = dir.appendingPathComponent("take.wav")
            let log = server.directory.appendingPathComponent("record.log").path
            var arguments = ["--device", server.monitorSourceName, "-o", file.path]
            arguments += interrupted ? ["--channel-map", "1,0"] : ["--duration", "2.5"]
            let child = try startRecord(arguments, server: server, log: log)
            try waitForTemporary(in: dir)
            usleep(300_000)
            let pacat = try server.startPlaying(file: raw)
            if interrupted {
                usleep(2_500_000)
                child.send(SIGINT)
            }
            let status = child.wait(timeout: 20)
            server.stopChild(pacat)
            let output = [".out", ".err"].map { (try? String(contentsOfFile: log + $0, encoding: .utf8)) ?? "" }.joined()
            XCTAssertEqual(status, 0, output)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["take.wav"], "no temporary left")
            let read = try AudioFileReader.read(path: file.path)
            XCTAssertEqual(read.info.channels, 2)
            if !interrupted { XCTAssertEqual(read.info.frames, 120_000, "--duration 2.5 at 48 kHz") }
            let (matching, available) = try compareRecording(read.channels, played, map: map)
            print("record \(map)\(interrupted ? " (SIGINT)" : ""): \(matching) of \(available) frames bit-identical; \(output.split(separator: "\n").last ?? "")")
            XCTAssertEqual(matching, available, "\(map)")
            XCTAssertGreaterThan(available, 48_000, "\(map): at least a second of the tone recorded")
        }
    }

    /// `record` captures from 0.2 s after its launch: a click train played into the sink from
    /// 0.2 s after `record` was launched is recorded from its first click (the report: capture
    /// began 1-1.5 s after launch and a sound played at 1.5 s was missed at its start). Three runs.
    func testRecordCapturesWhatIsPlayedFromAFifthOfASecondAfterLaunch() throws {
        let server = try PulseTestServer()
        defer { server.stop() }
        // A click every 10 ms for 1 s: the first click is at frame 0 of what pacat plays.
        var clicks = [Float](repeating: 0, count: 2 * 48000)
        for k in 0..<100 { clicks[2 * 480 * k] = 0.5; clicks[2 * 480 * k + 1] = 0.5 }
        let raw = server.directory.appendingPathComponent("clicks.raw")
        try clicks.withUnsafeBytes { try Data($0).write(to: raw) }
        for run in 0..<3 {
            let dir = try TestFiles.makeTemporaryDirectory(self)
            let file = dir.appendingPathComponent("take.wav")
            let log = server.directory.appendingPathComponent("record-early.log").path
            let child = try startRecord(["--device", server.monitorSourceName, "--duration", "2", "-o", file.path], server: server, log: log)
            usleep(200_000)
            let pacat = try server.startPlaying(file: raw)
            let status = child.wait(timeout: 20)
            server.stopChild(pacat)
            let output = [".out", ".err"].map { (try? String(contentsOfFile: log + $0, encoding: .utf8)) ?? "" }.joined()
            XCTAssertEqual(status, 0, output)
            let read = try AudioFileReader.read(path: file.path)
            let left = read.channels[0]
            let peaks = left.indices.filter { left[$0] > 0.1 }
            let spacingOK = zip(peaks, peaks.dropFirst()).allSatisfy { $1 - $0 == 480 }
            print("record from launch, run \(run): \(peaks.count) of 100 clicks, first at frame \(peaks.first ?? -1), spaced 480: \(spacingOK)")
            XCTAssertEqual(peaks.count, 100, "run \(run): clicks missing (the capture started late or has a hole)")
            XCTAssertTrue(spacingOK, "run \(run): a hole between clicks")
        }
    }

    /// `play` of a graph with a `recorder` node: after --duration the recording is renamed into
    /// place and holds every frame the graph rendered (the oscillator's formula).
    func testPlayFinishesARecorderNode() throws {
        let server = try PulseTestServer()
        defer { server.stop() }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let graph = try write("""
            { "version": 1, "sampleRate": 48000,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.5 } },
                         { "id": "rec", "type": "recorder", "properties": { "file": "played.wav" } },
                         { "id": "out", "type": "output" } ],
              "connections": [ { "from": "osc", "to": "rec" }, { "from": "rec", "to": "out" } ] }
            """, "graph.json", in: dir)
        guard let exe = CommandLineTests.executable else { throw XCTSkip("the audiograph executable is not built") }
        let env = ProcessInfo.processInfo.environment.merging(server.environment) { $1 }
        let log = server.directory.appendingPathComponent("play.log").path
        let child = try ChildProcess(executable: exe.path, arguments: ["play", graph, "--duration", "0.5"], environment: env,
                                     standardOutput: log, standardError: log + ".err")
        let status = child.wait(timeout: 30)
        XCTAssertEqual(status, 0, (try? String(contentsOfFile: log + ".err", encoding: .utf8)) ?? "")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["graph.json", "played.wav"])
        let read = try AudioFileReader.read(path: dir.appendingPathComponent("played.wav").path)
        // The output renders in quanta sized from its latency that end exactly at --duration
        // (0.5 s at 48 kHz): the graph, and so the recorder, stops on that frame.
        XCTAssertEqual(read.info.frames, 24_000)
        let e = SignalMeasurement.worstError(read.channels[0]) { n in 0.5 * sin(2 * Double.pi * 440 * Double(n) / 48000) }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
    }

    /// Bad input: a file type the extension does not name (exit 1, nothing written), a malformed
    /// channel map (exit 2). Neither needs a server.
    func testRecordBadInputFailsInOneLine() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        // (.mp3 and .opus are written since libsndfile's encoders are used: a type nothing writes.)
        let mp3 = try run(["record", "--duration", "1", "-o", "x.xyz"], in: dir, timeout: 60)
        XCTAssertEqual(mp3.status, 1, mp3.stderr)
        XCTAssertEqual(mp3.stderrLines.count, 1, mp3.stderr)
        let map = try run(["record", "--channel-map", "1,x", "-o", "x.wav"], in: dir, timeout: 60)
        XCTAssertEqual(map.status, 2, map.stderr)
        XCTAssertTrue(map.stderr.contains("--channel-map"), map.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }
}
