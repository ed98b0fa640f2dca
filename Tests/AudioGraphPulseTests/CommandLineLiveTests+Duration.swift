// `audiograph play --duration` in graph time, under a flood of commands and endless standard input (issue 10).
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

extension CommandLineLiveTests {
    /// A 997 Hz sine (no sample but the first is exactly 0) at 0.5 into `out` with `latency` ms.
    private func writeToneGraph(latency: Int = 60) throws -> String {
        let path = server.directory.appendingPathComponent("tone-\(UUID().uuidString.prefix(6)).json").path
        try """
        { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
          "nodes": [
            { "id": "osc", "type": "oscillator", "parameters": { "frequency": 997, "amplitude": 0.5 }, "properties": { "channels": 2 } },
            { "id": "out", "type": "output", "properties": { "latency": \(latency) } } ],
          "connections": [ { "from": "osc", "to": "out" } ] }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Plays `graph` for `seconds` while recording the sink's monitor; returns the exit status,
    /// the wall time, the output, and the frames the monitor heard (non-zero left samples).
    private func playAndCount(_ graph: String, seconds: Double, stdin: String? = nil, timeout: Double = 20)
        throws -> (status: Int32?, elapsed: Double, out: String, err: [String], heard: Int) {
        let file = server.directory.appendingPathComponent("heard-\(UUID().uuidString.prefix(6)).raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        usleep(300_000)
        let started = Date()
        let run = try launch(["play", graph, "--duration", String(seconds)], stdin: stdin)
        let status = run.process.wait(timeout: timeout)
        let elapsed = Date().timeIntervalSince(started)
        usleep(300_000)
        server.stopChild(recorder)
        let (out, err) = run.output()
        let samples = try PulseTestServer.readRawFloat32(file)
        let heard = (0..<(samples.count / 2)).filter { samples[2 * $0] != 0 }.count
        return (status, elapsed, out, err, heard)
    }

    /// `--duration S` plays exactly S seconds of graph time and drains: the monitor hears
    /// S × 48000 frames of tone (less the first, which is 0), not the wall time since start-up.
    func testPlayDurationIsExactlyThatMuchGraphTimeHeard() throws {
        let graph = try writeToneGraph()
        for seconds in [0.25, 1.0] {
            let r = try playAndCount(graph, seconds: seconds)
            print(String(format: "play --duration %.2f: heard %d frames (%.4f s), exit %@ after %.2f s; %@",
                         seconds, r.heard, Double(r.heard) / 48000, String(describing: r.status), r.elapsed, r.out))
            XCTAssertEqual(r.status, 0, "\(r.err)")
            XCTAssertEqual(r.heard, Int(seconds * 48000) - 1, "heard exactly \(seconds) s")
            XCTAssertTrue(r.out.hasPrefix(String(format: "played %.2f s", seconds)), r.out)
        }
    }

    /// Sound from the first quantum: `play --duration 0.5` at 20 ms returns within 0.5 s + the
    /// latency + 0.2 s of its launch (process start, connection, drain included) and the monitor
    /// heard all of it, in three runs, with the other core kept busy by a spinning thread. A
    /// loaded machine (other work besides the spinner) now and then holds a run off by a second
    /// or more as a whole (process start included; in-process the end is rendered at 0.50-0.53 s):
    /// up to three more runs are made then, and three must hold. (The report: 1.4-2.5 s for a
    /// 0.5 s graph on a loaded machine.)
    func testPlayOfAHalfSecondGraphReturnsWithinItsLengthPlusTheLatencyPlusAFifth() throws {
        let graph = try writeToneGraph(latency: 20)
        let spinning = Atomic<Bool>(true)
        let spinner = Thread { while spinning.load(ordering: .relaxed) {} }
        spinner.start()
        defer { spinning.store(false, ordering: .relaxed) }
        var good = 0, runs: [Double] = []
        for run in 0..<6 where good < 3 {
            let r = try playAndCount(graph, seconds: 0.5)
            print(String(format: "play --duration 0.5 (other core busy), run %d: exit %@ after %.3f s; heard %d frames; %@",
                         run, String(describing: r.status), r.elapsed, r.heard, r.out))
            XCTAssertEqual(r.status, 0, "\(r.err)")
            XCTAssertEqual(r.heard, 24_000 - 1, "run \(run): heard all of it")
            runs.append(r.elapsed)
            if r.elapsed <= 0.5 + 0.020 + 0.2 { good += 1 }
        }
        XCTAssertEqual(good, 3, "fewer than 3 of \(runs.count) runs within 0.72 s: \(runs)")
    }

    /// Thousands of queued `update` commands neither stretch `--duration` nor delay Ctrl-C.
    func testAFloodOfCommandsDoesNotDelayTheEndOrCtrlC() throws {
        let graph = try writeToneGraph()
        let commands = server.directory.appendingPathComponent("flood.txt").path
        try String(repeating: "disconnect out\nconnect osc out\nupdate\nset osc amplitude 0.5 0.01\n", count: 20_000)
            .write(toFile: commands, atomically: true, encoding: .utf8)
        let r = try playAndCount(graph, seconds: 1, stdin: commands)
        print(String(format: "flood: heard %d frames, exit %@ after %.2f s, %d error lines", r.heard,
                     String(describing: r.status), r.elapsed, r.err.count))
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.heard, 48000 - 1, "exactly one second of graph time")
        XCTAssertLessThan(r.elapsed, 1 + 2.5, "stops at the end, not when the queue is empty")

        let run = try launch(["play", graph], stdin: commands)
        try waitForSinkInput()
        usleep(300_000)
        let interrupted = Date()
        run.process.send(SIGINT)
        let status = run.process.wait(timeout: 10)
        let stopped = Date().timeIntervalSince(interrupted)
        print(String(format: "flood + Ctrl-C: exit %@ after %.0f ms", String(describing: status), stopped * 1000))
        XCTAssertEqual(status, 0)
        XCTAssertLessThan(stopped, 1.0)
    }

    /// `play < /dev/zero`: one endless line. The command reader keeps at most 4 KiB of it, so the
    /// process stays small, and the play ends on time.
    func testEndlessStandardInputStaysBounded() throws {
        let run = try launch(["play", try writeToneGraph(), "--duration", "2"], stdin: "/dev/zero")
        try waitForSinkInput()
        usleep(1_000_000)
        let status = try String(contentsOfFile: "/proc/\(run.process.processIdentifier)/status", encoding: .utf8)
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
        print("play < /dev/zero: VmRSS \(rss) kB after 1 s")
        XCTAssertGreaterThan(rss, 0)
        XCTAssertLessThan(rss, 200_000, "bounded memory")
        XCTAssertEqual(run.process.wait(timeout: 10), 0)
        XCTAssertTrue(run.output().0.hasPrefix("played 2.00 s"), run.output().0)
    }
}
