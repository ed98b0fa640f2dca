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

    /// Runs `audiograph play` for `seconds` (with `busy`, while a thread of this process keeps the
    /// other core busy); returns the summary line.
    private func play(_ cli: String, _ graph: String, seconds: Double, busy keepBusy: Bool) throws -> String {
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
        let p = try ChildProcess(executable: cli, arguments: ["play", graph, "--duration", String(seconds)],
                                 environment: server.environment, standardInput: nil, standardOutput: out, standardError: err)
        let status = p.wait(timeout: seconds + 15)
        let summary = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        XCTAssertEqual(status, 0, "play failed: \(errors)")
        return summary.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func underruns(in summary: String) -> Int? {
        guard let r = summary.range(of: "underruns ") else { return nil }
        return Int(summary[r.upperBound...].prefix { $0.isNumber })
    }

    /// 20 s of 32 voices at 20 ms latency, first with the other core idle, then kept busy by a
    /// spinning thread, and 5 s at 10 ms (busy). Measured and printed; asserted: the 20 ms runs
    /// play their whole length with audio flowing (fewer than three underruns per second). Zero underruns
    /// under load is not asserted: on these 2-vCPU virtual machines a busy second core costs a
    /// few underruns per 20 s even with the render, libpulse and server I/O threads all real-time
    /// (see Docs/PulseAudio.md), and CI must not flake.
    func testThirtyTwoVoicesPlayTwentySecondsAtTwentyMilliseconds() throws {
        let cli = try releaseCLI()
        let idle = try play(cli, try thirtyTwoVoices(latency: 20), seconds: 20, busy: false)
        let at20 = try play(cli, try thirtyTwoVoices(latency: 20), seconds: 20, busy: true)
        let at10 = try play(cli, try thirtyTwoVoices(latency: 10), seconds: 5, busy: true)
        print("32 voices at 20 ms, other core idle: \(idle) | other core busy: \(at20) | at 10 ms, busy: \(at10)")
        for summary in [idle, at20] {
            XCTAssertTrue(summary.hasPrefix("played 19.") || summary.hasPrefix("played 20."), summary)
            let u = try XCTUnwrap(underruns(in: summary), summary)
            XCTAssertLessThan(u, 60, summary)
        }
        XCTAssertNotNil(underruns(in: at10), at10)
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
        XCTAssertNil(player.execute("set osc amplitude 0.125"))
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
