// Tests of `audiograph play`, `devices` and `meter` run as a process against a real private daemon.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class CommandLineLiveTests: PulseServerTestCase {
    /// The `audiograph` binary built next to this test bundle.
    var binary: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/audiograph").path
    }

    struct Run {
        let process: ChildProcess
        let stdout: String
        let stderr: String
        func output() -> (String, [String]) {
            let out = (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? ""
            let err = ((try? String(contentsOfFile: stderr, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            return (out, err)
        }
    }

    func launch(_ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil) throws -> Run {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: binary), "build the CLI first (swift build)")
        let id = UUID().uuidString.prefix(8)
        let out = server.directory.appendingPathComponent("cli-\(id).out").path
        let err = server.directory.appendingPathComponent("cli-\(id).err").path
        let p = try ChildProcess(executable: binary, arguments: arguments, environment: environment ?? server.environment,
                                 standardInput: stdin, standardOutput: out, standardError: err)
        return Run(process: p, stdout: out, stderr: err)
    }

    func writeGraph(latency: Int = 100) throws -> String {
        let path = server.directory.appendingPathComponent("play.json").path
        try """
        { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
          "nodes": [
            { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 },
              "properties": { "channels": 2 } },
            { "id": "out", "type": "output", "properties": { "latency": \(latency) } } ],
          "connections": [ { "from": "osc", "to": "out" } ] }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func waitForSinkInput(timeout: Double = 5) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try server.run("pactl", ["list", "short", "sink-inputs"]).output.isEmpty {
            guard Date() < deadline else { return XCTFail("the player never connected") }
            usleep(20_000)
        }
    }

    func testPlayWithoutServerExits3WithOneLine() throws {
        let graph = try writeGraph()
        var env = server.environment
        env["PULSE_SERVER"] = "unix:/tmp/ag-nothing-\(getpid())/native"
        let run = try launch(["play", graph, "--duration", "1"], environment: env)
        XCTAssertEqual(run.process.wait(timeout: 10), 3)
        let (_, err) = run.output()
        print("no server: \(err)")
        XCTAssertEqual(err.count, 1)
        XCTAssertTrue(err.first?.contains("no PulseAudio server") ?? false)
    }

    /// A graph made for offline rendering (its output a genericOutput) plays to the default sink.
    func testPlayOfAGenericOutputGraphUsesTheDefaultSink() throws {
        let path = server.directory.appendingPathComponent("offline.json").path
        try """
        { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
          "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 500, "amplitude": 0.25 } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "out" } ] }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let file = server.directory.appendingPathComponent("generic.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        usleep(300_000)
        let run = try launch(["play", path, "--duration", "1"])
        let status = run.process.wait(timeout: 10)
        usleep(200_000)
        server.stopChild(recorder)
        let (out, err) = run.output()
        XCTAssertEqual(status, 0, "stderr: \(err)")
        XCTAssertTrue(out.hasPrefix("played 1."), out)
        let samples = try PulseTestServer.readRawFloat32(file)
        let peak = samples.map(abs).max() ?? 0
        XCTAssertEqual(peak, 0.25, accuracy: 1e-3, "the tone reached the default (null) sink")
    }

    func testPlayHonoursDurationCommandsAndPrintsLatencyAndUnderruns() throws {
        let graph = try writeGraph()
        let commands = server.directory.appendingPathComponent("commands.txt").path
        try "set osc amplitude 0.125\nbogus command\n".write(toFile: commands, atomically: true, encoding: .utf8)
        let file = server.directory.appendingPathComponent("cli.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        usleep(300_000)
        let started = Date()
        let run = try launch(["play", graph, "--duration", "1.5"], stdin: commands)
        let status = run.process.wait(timeout: 10)
        let elapsed = Date().timeIntervalSince(started)
        usleep(200_000)
        server.stopChild(recorder)
        let (out, err) = run.output()
        print("play: status \(String(describing: status)) after \(elapsed) s; stdout: \(out)stderr: \(err)")
        XCTAssertEqual(status, 0)
        XCTAssertEqual(elapsed, 1.5, accuracy: 0.7)
        XCTAssertTrue(out.hasPrefix("played 1."), out)
        XCTAssertTrue(out.contains("latency requested 100 ms, reported "), out)
        XCTAssertTrue(out.contains("underruns 0"), out)
        XCTAssertEqual(err.count, 1, "one line for the bogus command")
        XCTAssertTrue(err.first?.contains("unknown command") ?? false)
        // The monitor heard the tone; its last half second is at the amplitude `set` chose.
        let samples = try PulseTestServer.readRawFloat32(file)
        let sound = (0..<(samples.count / 2)).filter { samples[2 * $0] != 0 }
        let last = try XCTUnwrap(sound.last)
        let peak = ((last - 24000)..<last).map { abs(samples[2 * $0]) }.max() ?? 0
        XCTAssertEqual(peak, 0.125, accuracy: 1e-4)
        XCTAssertGreaterThan(Double(sound.count) / 48000, 1.3)
    }

    func testCtrlCStopsCleanlyWithSummary() throws {
        let run = try launch(["play", try writeGraph()])
        try waitForSinkInput()
        usleep(300_000)
        run.process.send(SIGINT)
        XCTAssertEqual(run.process.wait(timeout: 3), 0)
        XCTAssertTrue(run.output().0.hasPrefix("played "))
        XCTAssertEqual(try server.run("pactl", ["list", "short", "sink-inputs"]).output, "")
    }

    func testServerKilledWhilePlayingExits3WithinOneSecond() throws {
        let run = try launch(["play", try writeGraph(), "--duration", "20"])
        try waitForSinkInput()
        usleep(300_000)
        let killed = Date()
        server.kill()
        let status = run.process.wait(timeout: 5)
        let elapsed = Date().timeIntervalSince(killed)
        let (_, err) = run.output()
        print(String(format: "server killed: exit %@ after %.0f ms: %@", String(describing: status), elapsed * 1000, err.joined()))
        XCTAssertEqual(status, 3)
        XCTAssertLessThan(elapsed, 1.0)
        XCTAssertEqual(err.count, 1)
        XCTAssertTrue(err.first?.contains("lost the connection") ?? false)
    }

    func testSinkRemovedWhilePlayingExits3() throws {
        let module = try server.run("pactl", ["load-module", "module-null-sink", "sink_name=extra", "format=float32le",
                                              "rate=48000", "channels=2"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let run = try launch(["play", try writeGraph(), "--duration", "20", "--device", "extra"])
        try waitForSinkInput()
        usleep(300_000)
        let removed = Date()
        try server.run("pactl", ["unload-module", module])
        let status = run.process.wait(timeout: 5)
        let elapsed = Date().timeIntervalSince(removed)
        let (_, err) = run.output()
        print(String(format: "sink removed: exit %@ after %.0f ms: %@", String(describing: status), elapsed * 1000, err.joined()))
        XCTAssertEqual(status, 3)
        XCTAssertLessThan(elapsed, 1.0)
        XCTAssertEqual(err, ["audiograph: PulseAudio device \"extra\" disappeared"])
    }

    /// Full duplex: pacat plays a tone into `agtest`; `play` runs input(agtest.monitor) → output
    /// to a second sink `duplex`, whose monitor we record: the tone comes through at its level.
    func testPlayRoutesInputNodeToOutputNode() throws {
        XCTAssertEqual(try server.run("pactl", ["load-module", "module-null-sink", "sink_name=duplex", "format=float32le",
                                                "rate=48000", "channels=2", "norewinds=1"]).status, 0)
        let graph = server.directory.appendingPathComponent("duplex.json").path
        try """
        { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
          "nodes": [
            { "id": "mic", "type": "input", "properties": { "device": "agtest.monitor", "latency": 50 } },
            { "id": "out", "type": "output", "properties": { "device": "duplex", "latency": 100 } } ],
          "connections": [ { "from": "mic", "to": "out" } ] }
        """.write(toFile: graph, atomically: true, encoding: .utf8)
        let count = 48000 * 4
        var interleaved = [Float](repeating: 0, count: 2 * count)
        for n in 0..<count {
            let v = sin(2 * Double.pi * 300 * Double(n) / 48000)
            interleaved[2 * n] = Float(0.3 * v)
            interleaved[2 * n + 1] = Float(0.15 * v)
        }
        let tone = server.directory.appendingPathComponent("tone.raw")
        try interleaved.withUnsafeBytes { try Data($0).write(to: tone) }
        let file = server.directory.appendingPathComponent("duplex.raw")
        let recorder = try server.startRecording(source: "duplex.monitor", to: file)
        let player = try server.startPlaying(file: tone)
        usleep(300_000)
        let run = try launch(["play", graph, "--duration", "2"])
        XCTAssertEqual(run.process.wait(timeout: 10), 0)
        server.stopChild(player)
        server.stopChild(recorder)
        let (out, err) = run.output()
        print("duplex: \(out)\(err)")
        XCTAssertTrue(out.contains("capture underruns"), out)
        let samples = try PulseTestServer.readRawFloat32(file)
        let first = try XCTUnwrap((0..<(samples.count / 2)).first { samples[2 * $0] != 0 }, "nothing came through")
        let left = try XCTUnwrap(ToneFit(dominantToneOf: (0..<48000).map { samples[2 * (first + 12000 + $0)] }, sampleRate: 48000))
        let right = try XCTUnwrap(ToneFit(dominantToneOf: (0..<48000).map { samples[2 * (first + 12000 + $0) + 1] }, sampleRate: 48000))
        print(String(format: "duplex fit: L %.4f Hz %.6f, R %.4f Hz %.6f, residual %.2e", left.tones[0].frequency, left.tones[0].amplitude,
                     right.tones[0].frequency, right.tones[0].amplitude, left.residualRMS))
        XCTAssertEqual(left.tones[0].frequency, 300, accuracy: 0.01)
        XCTAssertEqual(left.tones[0].amplitude, 0.3, accuracy: 1e-4)
        XCTAssertEqual(right.tones[0].amplitude, 0.15, accuracy: 1e-4)
        XCTAssertLessThan(left.residualRMS, 1e-6, "a glitch-free second")
    }

    func testDevicesListsSinkAndMonitorWithFormats() throws {
        let run = try launch(["devices"])
        XCTAssertEqual(run.process.wait(timeout: 10), 0)
        let lines = run.output().0.split(separator: "\n").map(String.init)
        print(lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("* sink   agtest ") && $0.contains("float32le 2 ch 48000 Hz") })
        XCTAssertTrue(lines.contains { $0.hasPrefix("* source agtest.monitor ") && $0.contains("(monitor of agtest)") })
    }

    /// A 0.5-amplitude sine measures -9.03 dBFS RMS and -6.02 dBFS peak, ten lines a second; the
    /// last line is its loudness: -6.0 LUFS (the -23 dBFS sine of EBU Tech 3341 reads -23.0 LUFS).
    func testMeterOnFilePrintsLevelsAtTenHertz() throws {
        let path = server.directory.appendingPathComponent("sine.wav").path
        let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let storage = ChannelBufferStorage(channelCount: 2, capacity: 48000)
        for n in 0..<48000 {
            let v = Float(0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000 + 0.25))
            storage.list.channel(0)[n] = v
            storage.list.channel(1)[n] = v
        }
        try writer.write(storage.list, frameCount: 48000)
        try writer.close()
        let run = try launch(["meter", path])
        XCTAssertEqual(run.process.wait(timeout: 10), 0)
        let lines = run.output().0.split(separator: "\n").map(String.init)
        print(lines.first ?? "", lines.last ?? "")
        XCTAssertEqual(lines.count, 11)
        let loudness = (lines.last ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
        XCTAssertEqual(loudness.count, 3, lines.last ?? "")  // integrated, range, true peak
        if loudness.count == 3 {
            XCTAssertEqual(loudness[0], 20 * log10(0.5), accuracy: 0.1, "integrated LUFS")
            XCTAssertEqual(loudness[1], 0, accuracy: 0.1, "range LU")
            XCTAssertEqual(loudness[2], 20 * log10(0.5), accuracy: 0.2, "true peak dBTP")
        }
        let expectedRMS = 20 * log10(0.5 / 2.0.squareRoot())
        for line in lines.dropLast() {
            let numbers = line.split(separator: " ").compactMap { Double($0) }
            XCTAssertEqual(numbers.count, 3, line)  // time, RMS, peak
            XCTAssertEqual(numbers[1], expectedRMS, accuracy: 0.01, line)
            XCTAssertEqual(numbers[2], 20 * log10(0.5), accuracy: 0.01, line)
        }
    }

    func testMeterOnDeviceMeasuresAPlayedTone() throws {
        let count = 48000 * 3
        var interleaved = [Float](repeating: 0, count: 2 * count)
        for n in 0..<count {
            let v = Float(0.4 * sin(2 * Double.pi * 500 * Double(n) / 48000))
            interleaved[2 * n] = v
            interleaved[2 * n + 1] = v
        }
        let file = server.directory.appendingPathComponent("tone.raw")
        try interleaved.withUnsafeBytes { try Data($0).write(to: file) }
        let player = try server.startPlaying(file: file)
        usleep(300_000)
        let run = try launch(["meter", "--device", server.monitorSourceName, "--duration", "1.2"])
        XCTAssertEqual(run.process.wait(timeout: 10), 0)
        server.stopChild(player)
        let lines = run.output().0.split(separator: "\n").map(String.init)
        print(lines.prefix(3).joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(lines.count, 8)
        let expectedRMS = 20 * log10(0.4 / 2.0.squareRoot())
        let rms = lines.compactMap { $0.split(separator: " ").compactMap { Double($0) }.dropFirst().first }
        XCTAssertGreaterThanOrEqual(rms.filter { abs($0 - expectedRMS) < 0.02 }.count, 6, "\(rms)")
        // Momentary loudness (400 ms) of the steady sine once its window is full, by BS.1770's
        // formula: -0.691 + 10·log10(Σ channels of the mean square after K-weighting), the
        // K-weighting's gain at 500 Hz from the standard's two 48 kHz biquads.
        func gain(_ b: [Double], _ a: [Double], _ frequency: Double) -> Double {
            let w = 2 * Double.pi * frequency / 48000
            func eval(_ c: [Double]) -> (Double, Double) { (c[0] + c[1] * cos(w) + c[2] * cos(2 * w), -c[1] * sin(w) - c[2] * sin(2 * w)) }
            let (nr, ni) = eval(b), (dr, di) = eval(a)
            return ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot()
        }
        let k = gain([1.53512485958697, -2.69169618940638, 1.19839281085285], [1, -1.69065929318241, 0.73248077421585], 500)
            * gain([1, -2, 1], [1, -1.99004745483398, 0.99007225036621], 500)
        let expectedMomentary = -0.691 + 10 * log10(2 * pow(0.4 * k, 2) / 2)
        let momentary = lines.dropFirst(4).compactMap { line -> Double? in
            let words = line.split(separator: " ")
            return words.firstIndex(of: "M").flatMap { $0 + 1 < words.count ? Double(words[$0 + 1]) : nil }
        }
        XCTAssertGreaterThanOrEqual(momentary.filter { abs($0 - expectedMomentary) < 0.1 }.count, 4,
                                    "\(momentary), expected \(expectedMomentary)")
    }
}
