// Live playback under load (the release CLI, as users run it) and the delay of a command on stdin.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

final class LivePerformanceTests: PulseServerTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The release CLI: `make test` builds it first and sets AG_REQUIRE_RELEASE_CLI=1 so the
    /// test cannot silently skip there; a bare `swift test` without it skips.
    private func releaseCLI() throws -> String {
        let path = Self.root.appendingPathComponent(".build/release/audiograph").path
        if !FileManager.default.isExecutableFile(atPath: path) {
            if ProcessInfo.processInfo.environment["AG_REQUIRE_RELEASE_CLI"] == "1" {
                XCTFail("\(path) is missing (make test builds it)")
            }
            throw XCTSkip("needs the release CLI (make build); make test runs this")
        }
        return path
    }

    /// A graph of 32 sine voices panned across a mixer, through an eq, to the PulseAudio output.
    private func thirtyTwoVoices(latency: Int) throws -> String {
        var nodes: [String] = []
        var connections: [String] = []
        var pans: [String] = []
        for v in 0..<32 {
            nodes.append(#"{ "id": "v\#(v)", "type": "oscillator", "parameters": { "frequency": \#(110 * (1 + Double(v) / 8)), "amplitude": 0.02 } }"#)
            connections.append(#"{ "from": "v\#(v)", "to": "mix:\#(v)" }"#)
            pans.append(#""input.\#(v).pan": \#(Double(v % 9) / 4 - 1)"#)
        }
        let text = """
        { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
          "nodes": [ \(nodes.joined(separator: ",\n")),
            { "id": "mix", "type": "mixer", "inputBusCount": 32, "parameters": { \(pans.joined(separator: ", ")) } },
            { "id": "eq", "type": "eq", "properties": { "preset": "loudness" } },
            { "id": "out", "type": "output", "properties": { "latency": \(latency) } } ],
          "connections": [ \(connections.joined(separator: ",\n")),
            { "from": "mix", "to": "eq" }, { "from": "eq", "to": "out" } ] }
        """
        let path = server.directory.appendingPathComponent("voices-\(latency).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// One `audiograph play` run and what the scheduling probe saw during it.
    private struct Run: CustomStringConvertible {
        var summary: String
        var probe: SchedulingProbe.Report
        /// What a time-sharing thread at the server main thread's nice level (−11) saw.
        var serverProbe: SchedulingProbe.Report
        var underruns: Int?
        var seconds: Double
        /// `play` exited 3 because the server did not answer for 2 s (its main thread starved).
        var serverStoppedAnswering = false
        /// While the stream played (from 0.3 s after the launch, which covers loading and
        /// connecting, until `seconds`) the machine held a real-time thread off for more than
        /// half the requested latency (10 ms of 20, 5 ms of 10: a CI run at 10 ms had 2 underruns
        /// at a single 6.9 ms stall), or for more than 5 ms (the probe's stall log) more than ten
        /// times; or held a thread like the server's main thread (time-sharing, nice −11) off as
        /// long: every request and fragment passes through that thread, and other normal-priority
        /// work on the machine delays it (`perf sched` at a load average of 9: each of 5 output
        /// underruns in 20 s at 10 ms followed a 5–19 ms wait of the server's main thread while
        /// other processes' threads ran on its CPU).
        var machineStalled: Bool {
            if serverStoppedAnswering { return true }
            let requested = Self.requestedLatency(in: summary) ?? 0.020
            return [probe, serverProbe].contains { report in
                let stalls = report.stalls(from: 0.3, to: seconds)
                return stalls.contains { $0.lateness > requested / 2 } || stalls.count > 10
            }
        }

        /// The latency the summary says was requested ("latency requested 10 ms"), seconds.
        static func requestedLatency(in summary: String) -> Double? {
            guard let r = summary.range(of: "latency requested ") else { return nil }
            return Double(summary[r.upperBound...].prefix { $0.isNumber || $0 == "." }).map { $0 / 1000 }
        }
        var description: String {
            (serverStoppedAnswering ? "(the server stopped answering) " : "") + "\(summary) [\(probe); server-class (nice −11) \(serverProbe)]"
        }
    }

    /// Runs `audiograph play` for `seconds` (with `busy`, while a thread of this process keeps the
    /// other core busy) with a scheduling probe alongside.
    private func play(_ cli: String, _ graph: String, seconds: Double, busy keepBusy: Bool) throws -> Run {
        let out = server.directory.appendingPathComponent("play-\(UUID().uuidString.prefix(6)).out").path
        let err = out + ".err"
        let busy = Atomic<Bool>(keepBusy)
        let exited = Atomic<Bool>(false)
        let spinner = Thread {
            var x = 1.0
            while busy.load(ordering: .relaxed) { x = x * 1.000001 + 1e-9 }
            if x == 0 { print(x) }
            exited.store(true, ordering: .releasing)
        }
        spinner.start()
        defer {
            busy.store(false, ordering: .relaxed)
            while !exited.load(ordering: .acquiring) { usleep(1000) }
        }
        // One probe per CPU: a stall of the CPU the render thread or the server runs on shows.
        let probes = SchedulingProbe.onEveryCPU()
        for probe in probes { probe.start() }
        let serverProbe = SchedulingProbe(niceness: SchedulingProbe.serverMainThreadNiceness)
        serverProbe.start()
        let p = try ChildProcess(executable: cli, arguments: ["play", graph, "--duration", String(seconds)],
                                 environment: server.environment, standardInput: nil, standardOutput: out, standardError: err)
        let status = p.wait(timeout: seconds + 15)
        let report = SchedulingProbe.Report.merged(probes.map { $0.stop() })
        let serverReport = serverProbe.stop()
        let summary = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        // A server that did not answer for 2 s is a swamped machine (seen at a load average of 10
        // while other test suites ran: the server-class probe was 372 ms late at worst), not a
        // failure of the run: such a run counts as stalled.
        let stoppedAnswering = status == 3 && errors.contains("stopped answering")
        if !stoppedAnswering { XCTAssertEqual(status, 0, "play failed: \(errors)") }
        var run = Run(summary: summary, probe: report, serverProbe: serverReport, underruns: underruns(in: summary), seconds: seconds)
        run.serverStoppedAnswering = stoppedAnswering
        return run
    }

    /// The total latency the summary reports ("reported 13.4 ms (server ... + ring ...)"), ms.
    private func reportedLatency(in summary: String) -> Double? {
        guard let r = summary.range(of: "reported ") else { return nil }
        return Double(summary[r.upperBound...].prefix { $0.isNumber || $0 == "." })
    }

    /// The ring part of the reported latency ("+ ring 2.4 ms"), ms.
    private func ringLatency(in summary: String) -> Double? {
        guard let r = summary.range(of: "+ ring ") else { return nil }
        return Double(summary[r.upperBound...].prefix { $0.isNumber || $0 == "." })
    }

    private func underruns(in summary: String) -> Int? {
        guard let r = summary.range(of: "underruns ") else { return nil }
        return Int(summary[r.upperBound...].prefix { $0.isNumber })
    }

    /// Plays until a run during which the machine did not stall (up to `attempts` runs) and
    /// asserts that run played its whole length without an underrun. Runs the machine stalled in
    /// are printed with their counts; when every attempt stalled the result is inconclusive (skip).
    private func cleanRun(_ cli: String, _ graph: String, seconds: Int, busy: Bool, _ label: String,
                          attempts: Int = 8, assertingOutputUnderruns: Bool = true) throws -> Run {
        var stalled: [Run] = []
        for _ in 0..<attempts {
            let run = try play(cli, graph, seconds: Double(seconds), busy: busy)
            if run.machineStalled {
                print("\(label): machine stalled, run repeated: \(run)")
                stalled.append(run)
                continue
            }
            XCTAssertTrue(run.summary.hasPrefix("played \(seconds - 1).") || run.summary.hasPrefix("played \(seconds)."),
                          "\(label): \(run)")
            let underruns = try XCTUnwrap(run.underruns, "\(label): \(run)")
            if assertingOutputUnderruns { XCTAssertEqual(underruns, 0, "\(label): \(run)") }
            return run
        }
        throw XCTSkip("\(label): the machine stalled real-time threads (see SchedulingProbe) in all \(attempts) runs: "
                      + stalled.map(\.description).joined(separator: "; "))
    }

    /// 20 s of 32 voices at 20 ms latency with the other core idle, then kept busy by a spinning
    /// thread: no underrun (in a run the machine itself did not stall; see `SchedulingProbe`).
    /// (10 ms has its own test with bounds, below.)
    func testThirtyTwoVoicesPlayTwentySecondsAtTwentyMillisecondsWithoutUnderruns() throws {
        let cli = try releaseCLI()
        let graph = try thirtyTwoVoices(latency: 20)
        let idle = try cleanRun(cli, graph, seconds: 20, busy: false, "20 ms, other core idle")
        let busy = try cleanRun(cli, graph, seconds: 20, busy: true, "20 ms, other core busy")
        print("32 voices at 20 ms, other core idle: \(idle) | other core busy: \(busy)")
    }

    /// Issue 9 item 5: 60 s of 32 voices at 10 ms with the other core kept busy: the reported
    /// total latency (server + our ring, the mean of the readings taken while playing) at most
    /// 15 ms, our ring at most 5 ms of it; and no underrun with AG_QUIET_MACHINE=1 (the lead's
    /// run on a machine doing nothing else), as the duplex test below. Runs the probes saw a
    /// stall in are repeated, then skipped, as in `cleanRun`. On a shared machine a run neither
    /// probe counted as stalled still had underruns at 10 ms, each with the server-class probe
    /// held off 2-5 ms many times while our real-time threads were on time (two busy loops
    /// besides the test's own, load average 9: 6 underruns with 67 such delays of the
    /// server-class probe and at most 2.1 ms of the real-time one; the duplex runs at 10 ms:
    /// 3, 5 and 20 underruns with 24, 12 and 158): every request passes through the server's
    /// main thread, which is not real-time, and a 10 ms queue leaves it 7.5 ms at best.
    func testThirtyTwoVoicesPlaySixtySecondsAtTenMillisecondsWithinFifteenMilliseconds() throws {
        let cli = try releaseCLI()
        let quiet = ProcessInfo.processInfo.environment["AG_QUIET_MACHINE"] == "1"
        let run = try cleanRun(cli, try thirtyTwoVoices(latency: 10), seconds: 60, busy: true, "10 ms, other core busy",
                               attempts: 3, assertingOutputUnderruns: quiet)
        print("32 voices at 10 ms for 60 s, other core busy: \(run)")
        let total = try XCTUnwrap(reportedLatency(in: run.summary), run.summary)
        let ring = try XCTUnwrap(ringLatency(in: run.summary), run.summary)
        XCTAssertLessThanOrEqual(total, 15, run.summary)
        XCTAssertLessThanOrEqual(ring, 5, run.summary)
        XCTAssertGreaterThan(total, 10 - 2.5, "the server queue holds at least tlength − minreq: \(run.summary)")
    }

    /// Issue 17 item 3: full duplex (input `agtest.monitor` → output to a second sink) for 60 s
    /// at 10 and at 20 ms with the other core busy: no capture underrun or overrun, no output
    /// underrun (at 10 ms only with AG_QUIET_MACHINE=1, the lead's run on a machine doing nothing
    /// else), and the summary's round trip within 2 × latency + 15 ms, in a run the machine did
    /// not stall (neither probe saw a stall; such runs are repeated, up to 3 times, then the test
    /// is skipped as inconclusive). The two null sinks run on two clocks: under load the output
    /// one consumes 300–400 ppm faster than the source delivers (it advances its clock by whole
    /// microseconds per chunk, rounded down), which without the capture's drift compensation
    /// drains the capture ring by 18 frames a second: 4–25 capture underruns a minute at 10 ms
    /// whatever the margin (5, 10, 15 ms), 0–4 at 20 ms.
    func testFullDuplexPlaysSixtySecondsWithRoundTripWithinBudget() throws {
        let cli = try releaseCLI()
        XCTAssertEqual(try server.run("pactl", ["load-module", "module-null-sink", "sink_name=duplex", "format=float32le",
                                                "rate=48000", "channels=2", "norewinds=1"]).status, 0)
        let quiet = ProcessInfo.processInfo.environment["AG_QUIET_MACHINE"] == "1"
        for latency in [10, 20] {
            let graph = server.directory.appendingPathComponent("duplex-\(latency).json").path
            try """
            { "version": 1, "sampleRate": 48000,
              "nodes": [
                { "id": "mic", "type": "input", "properties": { "device": "agtest.monitor", "latency": \(latency) } },
                { "id": "out", "type": "output", "properties": { "device": "duplex", "latency": \(latency) } } ],
              "connections": [ { "from": "mic", "to": "out" } ] }
            """.write(toFile: graph, atomically: true, encoding: .utf8)
            // (Output underruns at 10 ms only on a machine doing nothing else: in the full suite on
            // a shared machine, load average 10, a run both probes saw no stall in had 2.)
            let run = try cleanRun(cli, graph, seconds: 60, busy: true, "duplex at \(latency) ms, other core busy", attempts: 3,
                                   assertingOutputUnderruns: latency >= 20 || quiet)
            print("full duplex at \(latency) ms for 60 s, other core busy: \(run)")
            XCTAssertTrue(run.summary.hasPrefix("played 60.00 s"), run.summary)
            XCTAssertTrue(run.summary.contains("capture underruns 0, overruns 0"), run.summary)
            let r = try XCTUnwrap(run.summary.range(of: "round trip "), run.summary)
            let roundTrip = try XCTUnwrap(Double(run.summary[r.upperBound...].prefix { $0.isNumber || $0 == "." }), run.summary)
            XCTAssertLessThanOrEqual(roundTrip, Double(2 * latency + 15), run.summary)
        }
    }

    /// A `set` command while playing reaches the rendered audio at the next slice boundary: the
    /// recording's amplitude change lies at most one slice (plus half a period, the measurement's
    /// resolution) after the frame the graph had rendered when the command ran; it is heard one
    /// output latency after that.
    func testStdinParameterChangeIsHeardWithinLatencyPlusOneSlice() throws {
        let text = """
        { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
          "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 },
                       "properties": { "channels": 2 } },
                     { "id": "out", "type": "output", "properties": { "latency": 40 } } ],
          "connections": [ { "from": "osc", "to": "out" } ] }
        """
        let live = try GraphLoader.parse(text: text)
        let file = server.directory.appendingPathComponent("stdin.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        usleep(300_000)
        let player = try LivePlayer(live, server: server.serverString)
        try player.start()
        usleep(1_000_000)
        let before = player.renderedFrames
        XCTAssertNoThrow(try player.apply(.setParameter(node: "osc", address: "amplitude", value: 0.125, rampDuration: 0)))
        let after = player.renderedFrames
        usleep(700_000)
        let summary = player.stop()
        usleep(200_000)
        server.stopChild(recorder)

        let samples = try PulseTestServer.readRawFloat32(file)
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let first = try XCTUnwrap(left.firstIndex { $0 != 0 }, "the tone was recorded")
        // Graph frame n is recording index first - 1 + n (the sine's frame 0 is exactly 0).
        let loud = left.indices.filter { abs(left[$0]) > 0.13 }
        let lastLoud = try XCTUnwrap(loud.last)
        let changeFrame = lastLoud - (first - 1) + 1
        let slice = 256
        let latencyMs = (summary.latency?.total ?? 0) * 1000
        let delayMs = Double(changeFrame - before) / 48
        print("stdin set: rendered frame \(before)...\(after) at the command, change at graph frame \(changeFrame) "
              + "(\(String(format: "%.2f", delayMs)) ms later), heard after \(String(format: "%.1f", delayMs + latencyMs)) ms "
              + "(latency \(String(format: "%.1f", latencyMs)) ms + slice \(String(format: "%.2f", Double(slice) / 48)) ms)")
        XCTAssertGreaterThanOrEqual(changeFrame, before - 24, "not before the command")
        XCTAssertLessThanOrEqual(changeFrame, after + slice + 24, "within one slice of the command")
        XCTAssertTrue(left[(lastLoud + 1)...].allSatisfy { abs($0) <= 0.13 })
    }
}
