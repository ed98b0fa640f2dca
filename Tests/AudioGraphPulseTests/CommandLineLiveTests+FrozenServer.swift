// Tests of `audiograph play` against a PulseAudio server that stops answering (SIGSTOP): exit 3 with one line, in time.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

extension CommandLineLiveTests {
    /// The daemon is stopped (SIGSTOP: the socket stays open, nothing answers) 0.5 s into a
    /// `play --duration 3`: `play` exits 3 with one line saying the server stopped answering,
    /// within the duration + 3 s of its launch (it used to wait forever). The same with an input
    /// node (a full-duplex graph), whose capture watches the server as well.
    func testFrozenServerWhilePlayingExits3WithOneLine() throws {
        let duplex = server.directory.appendingPathComponent("frozen-duplex.json").path
        try """
        { "version": 1, "sampleRate": 48000,
          "nodes": [
            { "id": "mic", "type": "input", "properties": { "device": "agtest.monitor", "latency": 20 } },
            { "id": "out", "type": "output", "properties": { "latency": 20 } } ],
          "connections": [ { "from": "mic", "to": "out" } ] }
        """.write(toFile: duplex, atomically: true, encoding: .utf8)
        for graph in [try writeGraph(latency: 20), duplex] {
            let pid = try XCTUnwrap(server.processIdentifier)
            let launched = Date()
            let run = try launch(["play", graph, "--duration", "3"])
            try waitForSinkInput()
            usleep(500_000)
            kill(pid, SIGSTOP)
            let status = run.process.wait(timeout: 10)
            let elapsed = Date().timeIntervalSince(launched)
            kill(pid, SIGCONT)
            if status == nil { run.process.terminate(signal: SIGKILL) }
            let (out, err) = run.output()
            print(String(format: "frozen server (%@): exit %@ after %.2f s: %@%@", (graph as NSString).lastPathComponent,
                         String(describing: status), elapsed, out, err.joined()))
            XCTAssertEqual(status, 3, graph)
            XCTAssertLessThanOrEqual(elapsed, 3 + 3, graph)
            XCTAssertEqual(err.count, 1, "\(err)")
            XCTAssertTrue(err.first?.contains("stopped answering") ?? false, "\(err)")
            // The server answers again: wait until our stream has gone before the next run.
            let deadline = Date().addingTimeInterval(5)
            while try !server.run("pactl", ["list", "short", "sink-inputs"]).output.isEmpty, Date() < deadline { usleep(50_000) }
        }
    }
}
