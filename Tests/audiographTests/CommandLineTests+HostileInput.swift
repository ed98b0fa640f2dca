// The command line under hostile input (issue 10): extreme numbers, special files, path tricks, signals.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

extension CommandLineTests {
    /// A graph with one oscillator into a generic output; `osc`/`extra` are spliced into the JSON.
    private func graph(settings: String = "\"duration\": 0.05", osc: String = "", nodes: String = "",
                       connections: String = "", updates: String = "[]") -> String {
        """
        { "version": 1, \(settings),
          "nodes": [ { "id": "osc", "type": "oscillator"\(osc) }\(nodes), { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "out" }\(connections) ],
          "updates": \(updates) }
        """
    }

    // MARK: Numbers

    /// Each value the fuzzer used to crash `render` with: rejected at load (exit 1, one line naming
    /// the place) by both validate and render, never a trap; nothing written.
    func testHugeNumbersAreRejectedAtLoadWithOneLine() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("in.wav").path, [[Float](repeating: 0.25, count: 480)], sampleRate: 48000)
        let player = #", { "id": "p", "type": "player", "properties": { "file": "in.wav", "segment": { "duration": 1e15 } } }"#
        let cases: [(json: String, place: String)] = [
            (graph(settings: "\"duration\": 1e300"), "duration"),
            (graph(osc: #", "properties": { "startTime": 1e15 }"#), "properties.startTime"),
            (graph(osc: #", "properties": { "startTime": 1e300 }"#), "properties.startTime"),
            (graph(osc: #", "properties": { "stopTime": 1e300 }"#), "properties.stopTime"),
            (graph(nodes: player), "segment.duration"),
            (graph(updates: #"[ { "time": 0.01, "actions": [ { "setParameter": { "node": "osc", "address": "frequency", "value": 100, "rampDuration": 1e300 } } ] } ]"#),
             "rampDuration"),
            (graph(updates: #"[ { "time": 1e300, "actions": [] } ]"#), "updates[0].time"),
            (graph(settings: "\"sampleRate\": 2147483648, \"duration\": 0.05"), "sampleRate"),
            (graph(settings: "\"sampleRate\": 1e9, \"duration\": 0.05", nodes: #", { "id": "d", "type": "delay" }"#), "sampleRate"),
            (graph(settings: "\"sampleRate\": 1e7, \"duration\": 0.05",
                   nodes: #", { "id": "e", "type": "environment", "properties": { "renderingAlgorithm": "hrtf" } }"#), "sampleRate"),
            (graph(nodes: #", { "id": "i", "type": "input", "properties": { "latency": 1e300 } }"#), "latency"),
        ]
        for (i, c) in cases.enumerated() {
            _ = try write(c.json, "n\(i).json", in: dir)
            for command in [["validate", "n\(i).json"], ["render", "n\(i).json", "-o", "n\(i).wav", "--quiet"]] {
                let r = try run(command, in: dir, timeout: 60)
                XCTAssertEqual(r.status, 1, "case \(i) \(command): \(r.stderr)")
                XCTAssertEqual(r.stderrLines.count, 1, "case \(i) \(command): \(r.stderr)")
                XCTAssertTrue(r.stderr.hasPrefix("n\(i).json: ") && r.stderr.contains(c.place), "case \(i): \(r.stderr)")
            }
        }
        XCTAssertFalse(fileNames(dir).contains { $0.hasSuffix(".wav") && $0 != "in.wav" }, "nothing written: \(fileNames(dir))")
    }

    /// The largest accepted times and the tiniest curve duration render (no trap) and give what
    /// they mean: an oscillator starting 10^7 s late is silent, a value curve lasting 5e-324 s
    /// jumps to its last value, a ramp lasting 10^7 s has barely moved.
    func testExtremeButAcceptedNumbersRender() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let late = graph(osc: #", "properties": { "startTime": 10000000 }"#)
        _ = try write(late, "late.json", in: dir)
        var r = try run(["render", "late.json", "-o", "late.wav", "--quiet"], in: dir, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let silent = try AudioFileReader.read(path: dir.appendingPathComponent("late.wav").path)
        XCTAssertEqual(silent.info.frames, 2400)
        XCTAssertEqual(silent.channels[0].map(abs).max(), 0, "not started yet")

        let curve = graph(osc: #", "parameters": { "amplitude": 1 }, "automation": { "frequency": [ { "setValueCurveAtTime": { "values": [ 100, 1000 ], "startTime": 0, "duration": 5e-324 } } ] }"#)
        _ = try write(curve, "curve.json", in: dir)
        r = try run(["render", "curve.json", "-o", "curve.wav", "--quiet"], in: dir, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let tone = try AudioFileReader.read(path: dir.appendingPathComponent("curve.wav").path)
        // The curve is over before the first frame: a 1000 Hz sine from frame 0.
        XCTAssertLessThan(SignalMeasurement.worstError(tone.channels[0]) { n in sin(2 * Double.pi * 1000 * Double(n) / 48000) }.error, 1e-4)

        // Web Audio's large end times (the W3C `large-endtime` cases): any finite automation time
        // is accepted; ramps ending at 1e300 s and the largest double have not moved, a curve whose
        // end overflows to infinity has not started, and nothing traps.
        let large = graph(osc: #", "parameters": { "frequency": 1000 }, "automation": { "amplitude": [ { "setValueAtTime": { "value": 0.5, "time": 0 } }, { "linearRampToValueAtTime": { "value": 1, "time": 1e300 } }, { "setValueCurveAtTime": { "values": [ 1, 0 ], "startTime": 1.7e308, "duration": 1.7e308 } } ], "frequency": [ { "setValueAtTime": { "value": 1000, "time": 0 } }, { "exponentialRampToValueAtTime": { "value": 20, "time": 1.7976931348623157e308 } } ] }"#)
        _ = try write(large, "large.json", in: dir)
        r = try run(["render", "large.json", "-o", "large.wav", "--quiet"], in: dir, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let held = try AudioFileReader.read(path: dir.appendingPathComponent("large.wav").path)
        XCTAssertLessThan(SignalMeasurement.worstError(held.channels[0]) { n in 0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000) }.error, 1e-4)

        let ramp = graph(osc: #", "parameters": { "amplitude": 1, "frequency": 1000 }"#,
                         updates: #"[ { "frame": 0, "actions": [ { "setParameter": { "node": "osc", "address": "frequency", "value": 2000, "rampDuration": 10000000 } } ] } ]"#)
        _ = try write(ramp, "ramp.json", in: dir)
        r = try run(["render", "ramp.json", "-o", "ramp.wav", "--quiet"], in: dir, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let slow = try AudioFileReader.read(path: dir.appendingPathComponent("ramp.wav").path)
        // 0.05 s into a 10^7 s ramp the frequency has moved by 5e-6 Hz: a 1000 Hz sine.
        XCTAssertLessThan(SignalMeasurement.worstError(slow.channels[0]) { n in sin(2 * Double.pi * 1000 * Double(n) / 48000) }.error, 1e-3)
    }

    // MARK: validate runs render's checks

    func testValidateRejectsWhatRenderWouldReject() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try Data("this is not HDF5".utf8).write(to: dir.appendingPathComponent("fake.sofa"))
        let cases: [(name: String, json: String, place: String)] = [
            ("ratio", graph(nodes: #", { "id": "c", "type": "converter", "properties": { "format": { "sampleRate": 100 } } }"#,
                            connections: #", { "from": "osc", "to": "c" }"#)
                .replacingOccurrences(of: #"{ "from": "osc", "to": "out" }, "#, with: "")
                .replacingOccurrences(of: #"{ "from": "osc", "to": "c" }"#, with: #"{ "from": "osc", "to": "c" }, { "from": "c", "to": "out" }"#),
             #"nodes[1] (id "c"): node "c": cannot convert"#),
            ("clientRate", graph().replacingOccurrences(of: #""type": "genericOutput""#,
                                                        with: #""type": "genericOutput", "properties": { "format": { "sampleRate": 768000 } }"#)
                .replacingOccurrences(of: "\"duration\": 0.05", with: "\"sampleRate\": 1000, \"duration\": 0.05"),
             #"nodes[1] (id "out"): node "out": cannot convert"#),
            ("sofa", graph(nodes: #", { "id": "env", "type": "environment", "properties": { "hrtf": "fake.sofa" } }"#), "properties.hrtf"),
            ("change", graph(nodes: #", { "id": "c", "type": "converter", "properties": { "format": { "sampleRate": 44100 } } }"#,
                             updates: #"[ { "time": 0.01, "actions": [ { "disconnect": { "to": "out" } }, { "connect": { "from": "osc", "to": "c" } }, { "connect": { "from": "c", "to": "out" } } ] } ]"#)
                .replacingOccurrences(of: #""type": "oscillator""#, with: #""type": "oscillator", "properties": { "channels": 1 }"#),
             "updates[0]"),
        ]
        for c in cases {
            _ = try write(c.json, "\(c.name).json", in: dir)
            let v = try run(["validate", "\(c.name).json"], in: dir, timeout: 60)
            XCTAssertEqual(v.status, 1, "\(c.name): \(v.stdout) \(v.stderr)")
            XCTAssertEqual(v.stderrLines.count, 1, "\(c.name): \(v.stderr)")
            XCTAssertTrue(v.stderr.hasPrefix("\(c.name).json: ") && v.stderr.contains(c.place), "\(c.name): \(v.stderr)")
            let r = try run(["render", "\(c.name).json", "-o", "\(c.name).wav", "--quiet"], in: dir, timeout: 60)
            XCTAssertEqual(r.status, 1, "\(c.name): render agrees: \(r.stderr)")
            XCTAssertEqual(r.stderr, v.stderr, "\(c.name): the same line")
        }
        XCTAssertFalse(fileNames(dir).contains { $0.hasSuffix(".wav") }, "\(fileNames(dir))")
    }

    /// A generic output with nothing connected renders silence of the asked length (it validated).
    func testUnconnectedGenericOutputRendersSilence() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(#"{ "version": 1, "duration": 0.1, "nodes": [ { "id": "out", "type": "genericOutput" } ], "connections": [] }"#,
                      "empty.json", in: dir)
        XCTAssertEqual(try run(["validate", "empty.json"], in: dir).status, 0)
        let r = try run(["render", "empty.json", "-o", "empty.wav", "--quiet"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        let read = try AudioFileReader.read(path: dir.appendingPathComponent("empty.wav").path)
        XCTAssertEqual(read.info, AudioFileInfo(sampleRate: 48000, channels: 2, frames: 4800))
        XCTAssertEqual(read.channels.flatMap { $0 }.map(abs).max(), 0)
    }

    /// Delay lines whose memory the machine does not have are refused at load, naming the limit
    /// (computed from this machine's memory, as the loader does).
    func testDelayMemoryBeyondTheMachineIsRefusedAtLoad() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let one = MemoryBudget.delayLineBytes(sampleRate: 768_000, channels: 256)
        let count = Int(MemoryBudget.limit / one) + 1
        var nodes = "", connections = ""
        for i in 0..<count {
            nodes += #", { "id": "d\#(i)", "type": "delay" }"#
            connections += #", { "from": "osc", "to": "d\#(i)" }"#
        }
        let json = graph(settings: "\"sampleRate\": 768000, \"duration\": 0.01", osc: #", "properties": { "channels": 256 }"#,
                         nodes: nodes, connections: connections)
        _ = try write(json, "delays.json", in: dir)
        let r = try run(["validate", "delays.json"], in: dir, timeout: 60)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("delay") && r.stderr.contains(MemoryBudget.describe(MemoryBudget.limit)), r.stderr)
    }

    // MARK: Special files

    func testFIFOsDevicesAndFoldersAreRefusedAtLoad() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        XCTAssertEqual(mkfifo(dir.appendingPathComponent("pipe.wav").path, 0o600), 0)
        XCTAssertEqual(mkfifo(dir.appendingPathComponent("pipe.sofa").path, 0o600), 0)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("folder.wav"), withIntermediateDirectories: false)
        let cases: [(file: String, json: String, reason: String)] = [
            ("pipe.wav", graph(nodes: #", { "id": "p", "type": "player", "properties": { "file": "pipe.wav" } }"#), "FIFO"),
            ("/dev/zero", graph(nodes: #", { "id": "p", "type": "player", "properties": { "file": "/dev/zero" } }"#), "device"),
            ("folder.wav", graph(nodes: #", { "id": "p", "type": "player", "properties": { "file": "folder.wav" } }"#), "directory"),
            ("pipe.sofa", graph(nodes: #", { "id": "e", "type": "environment", "properties": { "hrtf": "pipe.sofa" } }"#), "FIFO"),
        ]
        for (i, c) in cases.enumerated() {
            _ = try write(c.json, "f\(i).json", in: dir)
            for command in [["validate", "f\(i).json"], ["render", "f\(i).json", "-o", "f\(i).wav", "--quiet"]] {
                let r = try run(command, in: dir, timeout: 30)
                XCTAssertEqual(r.status, 1, "\(c.file) \(command): \(r.stderr)")
                XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
                XCTAssertTrue(r.stderr.contains(c.file) && r.stderr.contains(c.reason), r.stderr)
            }
        }
        // The graph file itself: a FIFO would block reading, a device never end.
        XCTAssertEqual(mkfifo(dir.appendingPathComponent("pipe.json").path, 0o600), 0)
        for (file, reason) in [("pipe.json", "FIFO"), ("/dev/zero", "device")] {
            for command in [["validate", file], ["render", file, "-o", "g.wav", "--quiet"]] {
                let r = try run(command, in: dir, timeout: 30)
                XCTAssertEqual(r.status, 1, "\(file) \(command): \(r.stderr)")
                XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
                XCTAssertTrue(r.stderr.hasPrefix(file) && r.stderr.contains(reason), r.stderr)
            }
        }
        for file in ["pipe.wav", "/dev/zero", "folder.wav"] {
            let m = try run(["meter", file], in: dir, timeout: 30)
            XCTAssertEqual(m.status, 1, "meter \(file): \(m.stderr)")
            XCTAssertEqual(m.stderrLines.count, 1, m.stderr)
            XCTAssertTrue(m.stderr.hasPrefix(file), m.stderr)
        }
    }

    // MARK: Paths and sizes

    /// An output or a tap in a folder that does not exist: one line naming the file the user
    /// gave (not the temporary name it is written under, `.x.partial-PID.wav`), with the system's
    /// reason, exit 3, nothing left behind. Seen failing (the line named the temporary file) before
    /// `OfflineRenderer.render` reported file errors under the user's name.
    func testAnOutputOrTapInAMissingFolderIsOneLineNamingIt() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(graph(), "g.json", in: dir)
        let r = try run(["render", "g.json", "-o", "no/such/x.wav", "--quiet"], in: dir)
        XCTAssertEqual(r.status, 3, r.stderr)
        XCTAssertEqual(r.stderr, "no/such/x.wav: cannot open: No such file or directory\n")
        let tapped = graph().replacingOccurrences(of: "\"updates\": []", with: #""updates": [], "taps": [ { "node": "osc", "file": "gone/t.wav" } ]"#)
        _ = try write(tapped, "t.json", in: dir)
        let t = try run(["render", "t.json", "-o", "x.wav", "--quiet"], in: dir)
        XCTAssertEqual(t.status, 3, t.stderr)
        XCTAssertEqual(t.stderr, "gone/t.wav: cannot open: No such file or directory\n")
        XCTAssertEqual(fileNames(dir).filter { !$0.hasSuffix(".json") }, [], "nothing written")
    }

    func testTapAndOutputPathsAreComparedResolved() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: false)
        let twoTaps = graph().replacingOccurrences(of: "\"updates\": []", with: #""updates": [], "taps": [ { "node": "osc", "file": "a.wav" }, { "node": "osc", "file": "./a.wav" }, { "node": "osc", "file": "sub/../a.wav" } ]"#)
        _ = try write(twoTaps, "taps.json", in: dir)
        let v = try run(["validate", "taps.json"], in: dir)
        XCTAssertEqual(v.status, 1, v.stderr)
        XCTAssertEqual(v.stderrLines, [#"taps.json: taps[1].file: "./a.wav" is already written by taps[0]"#,
                                       #"taps.json: taps[2].file: "sub/../a.wav" is already written by taps[0]"#])
        XCTAssertEqual(try run(["render", "taps.json", "-o", "x.wav"], in: dir).stderrLines, v.stderrLines, "render refuses the same way")

        let ownOutput = graph().replacingOccurrences(of: "\"updates\": []", with: #""updates": [], "taps": [ { "node": "osc", "file": "./sub/out.wav" } ]"#)
        _ = try write(ownOutput, "own.json", in: dir)
        XCTAssertEqual(try run(["validate", "own.json"], in: dir).status, 0)
        let r = try run(["render", "own.json", "-o", "sub/../sub/out.wav", "--quiet"], in: dir)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("own.json: taps[0].file"), r.stderr)
        XCTAssertEqual(fileNames(dir.appendingPathComponent("sub")), [], "refused before anything was written")
    }

    /// A length whose samples pass 4 GiB: AIFF (32-bit sizes, no 64-bit variant) is refused up
    /// front with exit 1; a WAV that long would be RF64 — here the disk check refuses 16 TB with
    /// exit 3. Nothing is written either way.
    func testOutputsPastFourGibibytesAreRefusedOrRF64BeforeWriting() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine, "g.json", in: dir)
        let frames = "2000000000000"  // 2e12 stereo float32 frames: 16 TB
        let aiff = try run(["render", "g.json", "-o", "big.aiff", "--frames", frames, "--quiet"], in: dir)
        XCTAssertEqual(aiff.status, 1, aiff.stderr)
        XCTAssertEqual(aiff.stderrLines.count, 1, aiff.stderr)
        XCTAssertTrue(aiff.stderr.hasPrefix("big.aiff: AIFF files hold at most 4 GiB"), aiff.stderr)
        let wav = try run(["render", "g.json", "-o", "big.wav", "--frames", frames, "--quiet"], in: dir)
        XCTAssertEqual(wav.status, 3, wav.stderr)
        XCTAssertEqual(wav.stderrLines.count, 1, wav.stderr)
        XCTAssertTrue(wav.stderr.contains("big.wav") && wav.stderr.contains("16000000 MB"), wav.stderr)
        XCTAssertEqual(fileNames(dir), ["g.json"])
    }

    // MARK: Signals

    /// SIGTERM, SIGHUP and SIGINT mid-render: exit 3, one line, no output and no temporary file.
    func testSignalsMidRenderCleanUp() throws {
        guard let exe = Self.executable else { throw XCTSkip("the audiograph executable is not built") }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine.replacingOccurrences(of: "\"duration\": 0.1", with: "\"duration\": 100000"), "long.json", in: dir)
        for sig in [SIGTERM, SIGHUP, SIGINT] {
            let p = Process()
            p.executableURL = exe
            p.arguments = ["render", "long.json", "-o", "long.flac", "--quiet"]
            p.currentDirectoryURL = dir
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            // Wait until the temporary file exists (the render is under way).
            let deadline = Date().addingTimeInterval(60)
            while !fileNames(dir).contains(where: { $0.contains(".partial-") }) && Date() < deadline && p.isRunning { usleep(10_000) }
            XCTAssertTrue(fileNames(dir).contains { $0.contains(".partial-") }, "the render started: \(fileNames(dir))")
            kill(p.processIdentifier, sig)
            let e = err.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            let message = String(decoding: e, as: UTF8.self)
            XCTAssertEqual(p.terminationReason, .exit, "signal \(sig): handled, not fatal")
            XCTAssertEqual(p.terminationStatus, 3, "signal \(sig): \(message)")
            XCTAssertEqual(message.split(separator: "\n").count, 1, message)
            XCTAssertTrue(message.hasPrefix("long.flac: interrupted"), message)
            XCTAssertEqual(fileNames(dir), ["long.json"], "signal \(sig): no output, no temporary file")
        }
    }

    // MARK: Non-finite audio (issue 22)

    /// A 0.2 s file with 13 NaN and infinite samples, played straight to the output (nothing
    /// contains it on that path): the summary used to report the NaN as silence (RMS -inf,
    /// -inf LUFS) with exit 0. Now render counts them (one warning line, the summary names the
    /// count, the peak and RMS describe the finite samples), `--strict` exits 3 with the file
    /// written, and `meter` counts them per line and in its summary.
    func testNonFiniteSamplesAreCountedAndStrictExits3() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        var x = (0..<9600).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        for i in 100..<110 { x[i] = .nan }
        x[2000] = .infinity; x[2001] = -.infinity; x[4000] = .nan
        try TestFiles.writeSoundFile(dir.appendingPathComponent("nan.wav").path, [x], sampleRate: 48000)
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.2,
              "nodes": [ { "id": "p", "type": "player", "properties": { "file": "nan.wav" } },
                         { "id": "out", "type": "genericOutput", "properties": { "format": { "channels": 1 } } } ],
              "connections": [ { "from": "p", "to": "out" } ] }
            """, "nan.json", in: dir)
        let r = try run(["render", "nan.json", "-o", "nan-out.wav"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderrLines, ["warning: nan-out.wav: 13 samples were NaN or infinite (left out of the peak, RMS and loudness)"])
        XCTAssertTrue(r.stdout.contains("peak -6.02 dBFS, RMS -9.0"), r.stdout)
        XCTAssertTrue(r.stdout.contains("13 non-finite samples"), r.stdout)
        XCTAssertTrue(r.stdout.contains("13 non-finite samples (NaN or infinity) measured as silence"), r.stdout)
        let strict = try run(["render", "nan.json", "-o", "strict.wav", "--strict", "--quiet"], in: dir)
        XCTAssertEqual(strict.status, 3, strict.stderr)
        XCTAssertEqual(strict.stderrLines, ["strict.wav: 13 samples were NaN or infinite (left out of the peak, RMS and loudness)"])
        XCTAssertTrue(fileNames(dir).contains("strict.wav"))
        // A clean graph passes --strict.
        _ = try write(sine, "sine.json", in: dir)
        XCTAssertEqual(try run(["render", "sine.json", "-o", "sine.wav", "--strict", "--quiet"], in: dir).status, 0)

        let m = try run(["meter", "nan.wav"], in: dir)
        XCTAssertEqual(m.status, 0, m.stderr)
        let lines = m.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[0].hasSuffix("  13 non-finite"), lines[0])
        XCTAssertFalse(lines[1].contains("non-finite"), lines[1])
        XCTAssertTrue(lines[0].contains("RMS  -9.0"), lines[0])
        XCTAssertTrue(lines.last!.contains("13 non-finite samples"), lines.last!)
        XCTAssertFalse(lines.last!.contains("integrated   -inf"), lines.last!)
    }

    // MARK: Runaway cost (issue 22)

    /// A chain of `count` varispeeds at `rate` (or automated up to it), osc -> v0 -> ... -> out.
    private func varispeedChain(_ count: Int, rate: Double, automated: Bool = false) -> String {
        let parameters = automated
            ? #""automation": { "rate": [ { "setValueAtTime": { "value": 1, "time": 0 } }, { "linearRampToValueAtTime": { "value": \#(rate), "time": 0.05 } } ] }"#
            : #""parameters": { "rate": \#(rate) }"#
        let nodes = (0..<count).map { #"{ "id": "v\#($0)", "type": "varispeed", \#(parameters) }"# }.joined(separator: ", ")
        let chain = ["osc"] + (0..<count).map { "v\($0)" } + ["out"]
        let connections = zip(chain, chain.dropFirst()).map { #"{ "from": "\#($0)", "to": "\#($1)" }"# }.joined(separator: ", ")
        return """
            { "version": 1, "duration": 0.1,
              "nodes": [ { "id": "osc", "type": "oscillator" }, \(nodes), { "id": "out", "type": "genericOutput" } ],
              "connections": [ \(connections) ] }
            """
    }

    /// 8 chained varispeeds at rate 4 pull 65,536 oscillator frames per output frame (448 s for
    /// 0.1 s of audio, and SIGTERM only acted at the end of the slice). Now validate and render
    /// refuse the chain at load with the same line naming the node pulled past 1024 frames per
    /// frame and the product; a ramp up to rate 4 counts as rate 4; four at rate 4 (256) render.
    func testChainedRateChangesAreBoundedAtLoad() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for (name, json) in [("eight", varispeedChain(8, rate: 4)), ("ramped", varispeedChain(6, rate: 4, automated: true))] {
            _ = try write(json, "\(name).json", in: dir)
            let v = try run(["validate", "\(name).json"], in: dir, timeout: 30)
            XCTAssertEqual(v.status, 1, "\(name): \(v.stderr)")
            XCTAssertEqual(v.stderrLines.count, 1, v.stderr)
            // The node nearest the output that is pulled more than 1024 frames per frame: 4^6 = 4096.
            let node = name == "eight" ? "v1" : "osc"
            XCTAssertTrue(v.stderr.contains(#"node "\#(node)": the rate-changing nodes after it pull 4096 of its frames per output frame (their rates multiply); at most 1024"#), v.stderr)
            let r = try run(["render", "\(name).json", "-o", "\(name).wav", "--quiet"], in: dir, timeout: 30)
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertEqual(r.stderr, v.stderr)
        }
        _ = try write(varispeedChain(4, rate: 4), "four.json", in: dir)
        let four = try run(["render", "four.json", "-o", "four.wav", "--quiet"], in: dir, timeout: 120)
        XCTAssertEqual(four.status, 0, four.stderr)
    }

    /// A live input reaching a timePitch through a mixer validated (only a direct connection was
    /// refused) and then played with 2,250 capture underruns in 2 s; now the engine's resolve
    /// step follows every path, so validate names the input and the mixer.
    func testLiveInputThroughAMixerIntoTimePitchIsRefused() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write("""
            { "version": 1, "duration": 0.1,
              "nodes": [ { "id": "mic", "type": "input" }, { "id": "mix", "type": "mixer" }, { "id": "tp", "type": "timePitch" },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "mic", "to": "mix" }, { "from": "mix", "to": "tp" }, { "from": "tp", "to": "out" } ] }
            """, "live.json", in: dir)
        let v = try run(["validate", "live.json"], in: dir, timeout: 30)
        XCTAssertEqual(v.status, 1, v.stderr)
        XCTAssertEqual(v.stderrLines, [#"live.json: nodes[2] (id "tp"): node "tp": it reads its input ahead of the clock; a live input ("mic" through "mix") cannot be read ahead"#])
    }

    // MARK: validate = render, third round (issue 22)

    /// What only failed at the first write (render exit 1 naming the temporary file) or was
    /// ignored: a recorder in a missing folder, a FLAC recorder with float samples, a node-level
    /// `format` on the genericOutput (48 kHz float32 was written where 44.1 kHz int16 was asked).
    /// Now the engine's resolve step refuses each, so validate and render print the same one
    /// line naming the node, and nothing is written.
    func testValidateRefusesWhatWritingWouldRefuse() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let recorder = { (properties: String) in
            self.graph(nodes: #", { "id": "rec", "type": "recorder", "properties": \#(properties) }"#)
                .replacingOccurrences(of: #"{ "from": "osc", "to": "out" }"#, with: #"{ "from": "osc", "to": "rec" }, { "from": "rec", "to": "out" }"#)
        }
        let cases: [(name: String, json: String, place: String)] = [
            ("folder", recorder(#"{ "file": "no/such/folder/take.wav" }"#), #"node "rec": "#),
            ("flacFloat", recorder(#"{ "file": "take.flac", "sampleType": "float32" }"#), #"node "rec": "#),
            ("outputFormat", graph().replacingOccurrences(of: #""type": "genericOutput""#,
                                                          with: #""type": "genericOutput", "format": { "sampleRate": 44100, "sampleType": "int16" }"#),
             #"node "out": it has no output bus, so a node-level "format" would be ignored"#),
        ]
        for c in cases {
            _ = try write(c.json, "\(c.name).json", in: dir)
            let v = try run(["validate", "\(c.name).json"], in: dir, timeout: 60)
            XCTAssertEqual(v.status, 1, "\(c.name): \(v.stdout) \(v.stderr)")
            XCTAssertEqual(v.stderrLines.count, 1, "\(c.name): \(v.stderr)")
            XCTAssertTrue(v.stderr.hasPrefix("\(c.name).json: ") && v.stderr.contains(c.place), "\(c.name): \(v.stderr)")
            XCTAssertFalse(v.stderr.contains(".partial-"), v.stderr)
            let r = try run(["render", "\(c.name).json", "-o", "\(c.name).wav", "--quiet"], in: dir, timeout: 60)
            XCTAssertEqual(r.status, 1, "\(c.name): render agrees: \(r.stderr)")
            XCTAssertEqual(r.stderr, v.stderr, "\(c.name): the same line")
        }
        XCTAssertEqual(fileNames(dir).filter { !$0.hasSuffix(".json") }, [], "nothing written")
        // properties.format is where the delivered format goes, and it is honoured.
        _ = try write(graph().replacingOccurrences(of: #""type": "genericOutput""#,
                                                   with: #""type": "genericOutput", "properties": { "format": { "sampleRate": 44100, "sampleType": "int16" } }"#),
                      "client.json", in: dir)
        XCTAssertEqual(try run(["render", "client.json", "-o", "client.wav", "--quiet"], in: dir).status, 0)
        XCTAssertEqual(try AudioFileReader.read(path: dir.appendingPathComponent("client.wav").path).info.sampleRate, 44100)
    }

    /// A usage error is one line, with the hint on it (it took two).
    func testUsageErrorsAreOneLine() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let r = try run(["render"], in: dir)
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.hasSuffix("(run 'audiograph help' for usage)\n"), r.stderr)
    }

    // MARK: Temporary files and signals, third round (issue 22)

    /// A render past the file-size limit (`prlimit --fsize`) was killed by SIGXFSZ and left its
    /// temporary files; now the write fails, render exits 3 with one line and removes them.
    func testFileSizeLimitLeavesNoTemporaryFiles() throws {
        guard let exe = Self.executable else { throw XCTSkip("the audiograph executable is not built") }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine.replacingOccurrences(of: "\"duration\": 0.1", with: "\"duration\": 10"), "big.json", in: dir)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        p.arguments = ["--fsize=200000", "--", exe.path, "render", "big.json", "-o", "big.wav", "--quiet"]
        p.currentDirectoryURL = dir
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .exit, "not killed by SIGXFSZ: \(e)")
        XCTAssertEqual(p.terminationStatus, 3, e)
        XCTAssertEqual(e.split(separator: "\n").count, 1, e)
        XCTAssertEqual(fileNames(dir), ["big.json"], "no output, no temporary file")
    }

    /// A signal stops a render within 0.2 s even in the middle of one long slice (two timePitch
    /// nodes at rate 32 pull 1024 frames per output frame: one 65,536-frame slice takes tens of
    /// seconds; before, SIGTERM acted only at its end), and removes every temporary file.
    func testSignalMidSliceStopsWithinTheDeadline() throws {
        guard let exe = Self.executable else { throw XCTSkip("the audiograph executable is not built") }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write("""
            { "version": 1, "duration": 100,
              "nodes": [ { "id": "osc", "type": "oscillator" }, { "id": "a", "type": "timePitch", "parameters": { "rate": 32 } },
                         { "id": "b", "type": "timePitch", "parameters": { "rate": 32 } }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "a" }, { "from": "a", "to": "b" }, { "from": "b", "to": "out" } ] }
            """, "slow.json", in: dir)
        for sig in [SIGTERM, SIGINT] {
            let p = Process()
            p.executableURL = exe
            p.arguments = ["render", "slow.json", "-o", "slow.wav", "--quiet", "--slice", "65536", "--threads", "1"]
            p.currentDirectoryURL = dir
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            let deadline = Date().addingTimeInterval(60)
            while !fileNames(dir).contains(where: { $0.contains(".partial-") }) && Date() < deadline && p.isRunning { usleep(10_000) }
            usleep(300_000)  // well into the first slice
            let sent = Date()
            kill(p.processIdentifier, sig)
            let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            let took = Date().timeIntervalSince(sent)
            XCTAssertEqual(p.terminationReason, .exit, e)
            XCTAssertEqual(p.terminationStatus, 3, e)
            XCTAssertEqual(e, "slow.wav: interrupted; nothing was written\n")
            // 0.15 s deadline; the bound leaves room for a loaded 2-core machine.
            XCTAssertLessThan(took, 1.0, "signal \(sig)")
            XCTAssertEqual(fileNames(dir), ["slow.json"], "signal \(sig): no temporary file")
        }
    }

    /// `plot GRAPH` killed by SIGTERM or SIGHUP left its rendered temporary file (430-830 MB);
    /// now it stops within the deadline and removes it; and the temporary a killed (SIGKILL)
    /// plot left is removed by the next one.
    func testPlotOfAGraphLeavesNoTemporaryFile() throws {
        guard let exe = Self.executable else { throw XCTSkip("the audiograph executable is not built") }
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let tmp = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        _ = try write(sine.replacingOccurrences(of: "\"duration\": 0.1", with: "\"duration\": 100000"), "long.json", in: dir)
        func start() throws -> Process {
            let p = Process()
            p.executableURL = exe
            p.arguments = ["plot", "long.json", "-o", "long.png"]
            p.currentDirectoryURL = dir
            p.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": tmp.path]) { $1 }
            p.standardError = FileHandle.nullDevice
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            let deadline = Date().addingTimeInterval(60)
            let mine = "partial-\(p.processIdentifier)"
            while !fileNames(tmp).contains(where: { $0.contains(mine) }) && Date() < deadline && p.isRunning { usleep(10_000) }
            XCTAssertTrue(fileNames(tmp).contains { $0.contains(mine) }, "the render started")
            return p
        }
        for sig in [SIGTERM, SIGHUP] {
            let p = try start()
            kill(p.processIdentifier, sig)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationReason, .exit, "signal \(sig)")
            XCTAssertEqual(p.terminationStatus, 3, "signal \(sig)")
            XCTAssertEqual(fileNames(tmp), [], "signal \(sig)")
        }
        let killed = try start()
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        XCTAssertFalse(fileNames(tmp).isEmpty, "SIGKILL leaves the temporary")
        let next = try start()
        XCTAssertEqual(fileNames(tmp).filter { !$0.contains("partial-\(next.processIdentifier)") }, [], "the dead run's temporary is gone")
        kill(next.processIdentifier, SIGTERM)
        next.waitUntilExit()
        XCTAssertEqual(fileNames(tmp), [])
    }

    /// librubberband printed its own warnings on stderr ("R3Stretcher: WARNING: Ratio yields
    /// ideal inhop < minimum", one at 8 kHz for any rate; 13,640 for 0.5 s of NaN input). Now
    /// nothing but our own lines reaches stderr: a quiet render of timePitch at 8 kHz prints none.
    func testRubberbandPrintsNothing() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for rate in [0.5, 2, 32] {
            _ = try write("""
                { "version": 1, "sampleRate": 8000, "duration": 0.2,
                  "nodes": [ { "id": "osc", "type": "oscillator" }, { "id": "tp", "type": "timePitch", "parameters": { "rate": \(rate) } },
                             { "id": "out", "type": "genericOutput" } ],
                  "connections": [ { "from": "osc", "to": "tp" }, { "from": "tp", "to": "out" } ] }
                """, "tp.json", in: dir)
            let r = try run(["render", "tp.json", "-o", "tp.wav", "--quiet"], in: dir)
            XCTAssertEqual(r.status, 0)
            XCTAssertEqual(r.stderr, "", "rate \(rate)")
        }
    }
}
