// Tests of the `audiograph` command line, run as a subprocess: exit codes, messages, files written.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class CommandLineTests: XCTestCase {
    /// The built `audiograph` next to the test bundle (or in .build/debug of this checkout).
    static let executable: URL? = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let bundle = Bundle.main.bundleURL
        let candidates = [
            bundle.appendingPathComponent("audiograph"),
            bundle.deletingLastPathComponent().appendingPathComponent("audiograph"),
            Bundle(for: CommandLineTests.self).bundleURL.deletingLastPathComponent().appendingPathComponent("audiograph"),
            root.appendingPathComponent(".build/debug/audiograph"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// The release CLI of this checkout (`make build`: the flags users get). `make test` builds it
    /// first and sets AG_REQUIRE_RELEASE_CLI=1, so a test that needs it fails there when it is
    /// missing; a bare `swift test` skips.
    func releaseExecutable() throws -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let url = root.appendingPathComponent(".build/release/audiograph")
        if !FileManager.default.isExecutableFile(atPath: url.path) {
            if ProcessInfo.processInfo.environment["AG_REQUIRE_RELEASE_CLI"] == "1" { XCTFail("\(url.path) is missing (make test builds it)") }
            throw XCTSkip("needs the release CLI (make build); make test runs this")
        }
        return url
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
    }

    /// Runs the CLI in `directory`; a run still going after `timeout` seconds is killed (and the
    /// crash assertion below fails), so a hang fails the test instead of blocking it.
    /// `executable` runs another build of the CLI (``releaseExecutable()``).
    func run(_ arguments: [String], in directory: URL, timeout: Double = 300, environment: [String: String] = [:],
             executable: URL? = nil) throws -> Result {
        guard let exe = executable ?? Self.executable else { throw XCTSkip("the audiograph executable is not built") }
        let p = Process()
        p.executableURL = exe
        p.arguments = arguments
        p.currentDirectoryURL = directory
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let watchdog = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        // Read before waiting so a full pipe cannot block the child.
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .exit, "audiograph \(arguments) crashed")
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    let sine = """
        { "version": 1, "sampleRate": 48000, "duration": 0.1,
          "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 }, "properties": { "channels": 2 } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "out" } ] }
        """

    func write(_ text: String, _ name: String, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    // MARK: Exit statuses

    func testUsageErrorsExitWith2() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "g.json", in: dir)
        for args in [["render", "g.json", "--bogus"], ["frobnicate"], ["render"], ["render", "g.json", "--duration", "1", "--frames", "10"],
                     ["render", "g.json", "--slice", "0"], ["render", "g.json", "--sample-type", "int12"], ["validate"],
                     ["render", "g.json", "-o", "out.mp9"], ["render", "g.json", "--frames", "-5"], ["render", "g.json", "--duration", "nan"],
                     ["render", "g.json", "--duration", "-1"], ["inspect"], ["inspect", "g.json", "--svg"], ["render", "g.json", "-o", "out.flac", "--sample-type", "float32"],
                     ["render", "g.json", "--threads", "0"], ["render", "g.json", "--threads", "999"]] {
            let r = try run(args, in: dir)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertFalse(r.stderr.isEmpty, "\(args): an error message")
            XCTAssertLessThanOrEqual(r.stderrLines.count, 5, "\(args)")
        }
        XCTAssertEqual(fileNames(dir), ["g.json"], "nothing written")
    }

    func testHelpAndVersionExit0() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let help = try run(["--help"], in: dir)
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("render"), help.stdout)
        XCTAssertEqual(try run(["--version"], in: dir).status, 0)
    }

    func testInvalidGraphExitsWith1AndOneLineNamingTheFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write("""
            { "version": 1, "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "amplitude": 3 } },
                                       { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "out" } ] }
            """, "bad.json", in: dir)
        for command in [["render", "bad.json"], ["validate", "bad.json"], ["inspect", "bad.json"]] {
            let r = try run(command, in: dir)
            XCTAssertEqual(r.status, 1, "\(command)")
            XCTAssertEqual(r.stderrLines.count, 1, "\(command): \(r.stderr)")
            XCTAssertTrue(r.stderr.hasPrefix("bad.json"), r.stderr)
            XCTAssertTrue(r.stderr.contains("amplitude") && r.stderr.contains("3"), r.stderr)
        }
        XCTAssertEqual(fileNames(dir), ["bad.json"], "render wrote nothing")
    }

    func testMalformedInputsNeverCrash() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let inputs = ["", "{", "[]", "null", "{\"version\": 1}", "{\"version\": 2, \"nodes\": [], \"connections\": []}",
                      String(repeating: "[", count: 100_000), "{\"version\": 1, \"nodes\": [{\"id\": \"x\"}], \"connections\": 5}",
                      "\u{FEFF}{}", "{\"version\": 1e999}"]
        for (i, text) in inputs.enumerated() {
            _ = try write(text, "m\(i).json", in: dir)
            let r = try run(["validate", "m\(i).json"], in: dir)
            XCTAssertEqual(r.status, 1, "input \(i): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("m\(i).json"), "input \(i): \(r.stderr)")
        }
        let missing = try run(["render", "nowhere.json"], in: dir)
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("nowhere.json"), missing.stderr)
    }

    // MARK: validate, inspect

    func testValidateSeveralFiles() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "a.json", in: dir)
        _ = try write(sine, "b.json", in: dir)
        _ = try write(sine.replacingOccurrences(of: "\"to\": \"out\"", with: "\"to\": \"nobody\""), "c.json", in: dir)
        let ok = try run(["validate", "a.json", "b.json"], in: dir)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(ok.stdout, "a.json: ok\nb.json: ok\n")
        let mixed = try run(["validate", "a.json", "c.json", "b.json"], in: dir)
        XCTAssertEqual(mixed.status, 1)
        XCTAssertEqual(mixed.stdout, "a.json: ok\nb.json: ok\n", "every file is checked")
        XCTAssertTrue(mixed.stderr.hasPrefix("c.json") && mixed.stderr.contains("nobody"), mixed.stderr)
    }

    func testInspectTextAndDot() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "g.json", in: dir)
        let text = try run(["inspect", "g.json"], in: dir)
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.contains("osc (oscillator)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("output 0: 48000 Hz, 2 ch, float32, non-interleaved"), text.stdout)
        XCTAssertTrue(text.stdout.contains("out (genericOutput)"), text.stdout)
        let dot = try run(["inspect", "g.json", "--dot"], in: dir)
        XCTAssertEqual(dot.status, 0)
        XCTAssertTrue(dot.stdout.hasPrefix("digraph"), dot.stdout)
        XCTAssertTrue(dot.stdout.contains("\"osc\" -> \"out\""), dot.stdout)
    }

    // MARK: render

    func testRenderDefaultsToTheGraphsNameInTheCurrentFolder() throws {
        let graphs = try TestFiles.makeTemporaryDirectory(self), work = try TestFiles.makeTemporaryDirectory(self)
        let path = try write(sine, "tone.json", in: graphs)
        let r = try run(["render", path, "--quiet"], in: work)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(fileNames(work), ["tone.wav"])
        XCTAssertEqual(fileNames(graphs), ["tone.json"])
        let read = try AudioFileReader.read(path: work.appendingPathComponent("tone.wav").path)
        XCTAssertEqual(read.info, AudioFileInfo(sampleRate: 48000, channels: 2, frames: 4800), "the graph's duration")
        let e = SignalMeasurement.worstError(read.channels[1]) { n in 0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000) }
        XCTAssertLessThan(e.error, 1e-6)
        XCTAssertEqual(r.stdout, "", "--quiet prints nothing")
    }

    func testRenderFramesAndSampleType() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "g.json", in: dir)
        let r = try run(["render", "g.json", "-o", "short.wav", "--frames", "1000", "--sample-type", "int16", "--slice", "100"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("1000 frames"), r.stdout)
        let url = dir.appendingPathComponent("short.wav")
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int
        XCTAssertEqual(size, 44 + 1000 * 2 * 2, "16-bit stereo, a plain WAV header")
        let read = try AudioFileReader.read(path: url.path)
        XCTAssertEqual(read.info.frames, 1000)
        let e = SignalMeasurement.worstError(read.channels[0]) { n in 0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000) }
        XCTAssertLessThan(e.error, 1.01 / 32768)

        let d = try run(["render", "g.json", "-o", "d.flac", "--duration", "0.25", "--quiet"], in: dir)
        XCTAssertEqual(d.status, 0, d.stderr)
        XCTAssertEqual(try AudioFileReader.info(path: dir.appendingPathComponent("d.flac").path).frames, 12000)
    }

    /// `--threads 3` writes the same bytes as `--threads 1` (three oscillators into a mixer).
    func testRenderThreadsIsBitIdenticalToSerial() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.2,
              "nodes": [ { "id": "a", "type": "oscillator", "parameters": { "frequency": 300 } },
                         { "id": "b", "type": "oscillator", "parameters": { "frequency": 500 }, "properties": { "waveform": "square" } },
                         { "id": "c", "type": "oscillator", "parameters": { "frequency": 700 }, "properties": { "waveform": "sawtooth" } },
                         { "id": "mix", "type": "mixer", "inputBusCount": 3 }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "mix:0" }, { "from": "b", "to": "mix:1" }, { "from": "c", "to": "mix:2" },
                               { "from": "mix", "to": "out" } ] }
            """, "g.json", in: dir)
        for threads in ["1", "3"] {
            let r = try run(["render", "g.json", "-o", "t\(threads).wav", "--threads", threads, "--quiet"], in: dir)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let serial = try Data(contentsOf: dir.appendingPathComponent("t1.wav"))
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("t3.wav")), serial)
        XCTAssertGreaterThan(serial.count, 9600 * 2 * 4)
    }

    /// Without `--slice` the render picks its slice size (OfflineRenderer.defaultSliceSize: 1024
    /// for this short render, 4096 for a long one); the file is byte for byte the one
    /// `--slice 4096`, `--slice 512` (the file's value) and `--slice 37` write, on
    /// a graph with automation, ramps, structural updates off slice boundaries and a converter
    /// (48 kHz stereo to 44.1 kHz with a channel map and int24, its quality changed mid-render).
    func testDefaultSliceSizeRendersTheSameBytesAsSmallSlices() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 512, "duration": 0.6,
              "nodes": [ { "id": "low", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.4 },
                           "automation": { "frequency": [ { "setValueAtTime": { "value": 300, "time": 0.05 } },
                                                          { "exponentialRampToValueAtTime": { "value": 900, "time": 0.4 } } ] } },
                         { "id": "high", "type": "oscillator", "parameters": { "frequency": 5000, "amplitude": 0.2 },
                           "properties": { "waveform": "square" } },
                         { "id": "pair", "type": "mixer", "inputBusCount": 3, "parameters": { "input.0.pan": -1, "input.1.pan": 1 } },
                         { "id": "to44k1", "type": "converter",
                           "properties": { "format": { "sampleRate": 44100, "sampleType": "int24" }, "quality": "best", "channelMap": [1, 0] } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "low", "to": "pair:0" }, { "from": "high", "to": "pair:1" },
                               { "from": "pair", "to": "to44k1" }, { "from": "to44k1", "to": "out" } ],
              "updates": [
                { "frame": 4567, "actions": [ { "setParameter": { "node": "pair", "address": "input.1.volume", "value": 0.3, "rampDuration": 0.0333 } } ] },
                { "time": 0.2501, "actions": [
                    { "addNode": { "id": "tri", "type": "oscillator", "parameters": { "frequency": 330 }, "properties": { "waveform": "triangle" } } },
                    { "connect": { "from": "tri", "to": "pair:2" } } ] },
                { "time": 0.3, "actions": [ { "setProperty": { "node": "to44k1", "name": "quality", "value": "medium" } } ] },
                { "frame": 20011, "actions": [ { "disconnect": { "to": "pair:1" } } ] } ] }
            """, "g.json", in: dir)
        for (name, slice) in [("default", [String]()), ("s4096", ["--slice", "4096"]), ("s512", ["--slice", "512"]), ("s37", ["--slice", "37"])] {
            let r = try run(["render", "g.json", "-o", "\(name).wav", "--quiet"] + slice, in: dir)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let reference = try Data(contentsOf: dir.appendingPathComponent("default.wav"))
        let frames = try AudioFileReader.read(path: dir.appendingPathComponent("default.wav").path)
        XCTAssertEqual(frames.info.sampleRate, 44100)
        XCTAssertEqual(frames.info.frames, 26460, "0.6 s at 44.1 kHz")
        XCTAssertGreaterThan(frames.channels[1].map(abs).max()!, 0.3, "the 440 Hz oscillator, mapped to channel 1")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("s4096.wav")), reference, "--slice 4096")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("s512.wav")), reference, "--slice 512")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("s37.wav")), reference, "--slice 37")
    }

    func testRenderWritesNoFileOnFailure() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("in.wav").path, [[Float](repeating: 0.5, count: 100)], sampleRate: 48000)
        _ = try write("""
            { "version": 1, "duration": 1,
              "nodes": [ { "id": "osc", "type": "oscillator" }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "out" } ],
              "updates": [ { "time": 0.5, "actions": [ { "addNode": { "id": "p", "type": "player", "properties": { "file": "in.wav" } } } ] } ] }
            """, "late.json", in: dir)
        XCTAssertEqual(try run(["validate", "late.json"], in: dir).status, 0)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("in.wav"))
        let r = try run(["render", "late.json", "-o", "late.wav"], in: dir)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("late.json"), r.stderr)
        XCTAssertEqual(fileNames(dir), ["late.json"], "no output and no partial file")

        // An output folder that does not exist: a runtime failure (3), nothing written.
        _ = try write(sine, "g.json", in: dir)
        let w = try run(["render", "g.json", "-o", "missing/folder/g.wav"], in: dir)
        XCTAssertEqual(w.status, 3, w.stderr)
        XCTAssertEqual(fileNames(dir), ["g.json", "late.json"])
    }

    // MARK: Loudness (EBU R128)

    func testMeterFilePrintsEBUR128Loudness() throws {
        // EBU Tech 3341 case 2: a stereo 1 kHz sine at -33 dBFS reads -33.0 LUFS, range 0, true peak -33 dBTP.
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("case2.wav").path, EBUTestSignals.sineSegments([(-33, 10)]), sampleRate: 48000)
        let r = try run(["meter", "case2.wav"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 101, "100 level lines and the loudness")
        XCTAssertEqual(lines.last, "integrated -33.0 LUFS, range 0.0 LU, true peak -33.0 dBTP")
    }

    func testRenderSummaryReportsLoudnessUnlessQuiet() throws {
        // The same signal rendered: an oscillator at 10^(-23/20) (-23 dBFS), stereo, 5 s -> -23.0 LUFS.
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 5,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": \(pow(10, -23.0 / 20)) }, "properties": { "channels": 2 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "out" } ] }
            """, "case1.json", in: dir)
        let r = try run(["render", "case1.json", "-o", "case1.wav"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasSuffix("\nintegrated -23.0 LUFS, range 0.0 LU, true peak -23.0 dBTP\n"), r.stdout)
        let q = try run(["render", "case1.json", "-o", "case1.wav", "--quiet"], in: dir)
        XCTAssertEqual(q.status, 0, q.stderr)
        XCTAssertEqual(q.stdout, "")
    }
}
