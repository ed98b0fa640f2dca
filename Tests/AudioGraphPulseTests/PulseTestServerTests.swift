// Tests of the PulseTestServer fixture itself: the daemon runs in real time and goes away.
import AudioGraphTesting
import Foundation
import XCTest

final class PulseTestServerTests: XCTestCase {
    /// The null sink's monitor delivers 48000 frames per second of wall-clock time, and stop()
    /// leaves no daemon behind.
    func testMonitorRunsInRealTimeAndStopKillsDaemon() throws {
        let server = try PulseTestServer()
        let pid = try XCTUnwrap(server.processIdentifier)
        XCTAssertEqual(try server.run("pactl", ["get-default-sink"]).output, "agtest\n")
        let file = server.directory.appendingPathComponent("idle.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        let start = Date()
        Thread.sleep(forTimeInterval: 2)
        server.stopChild(recorder)
        let seconds = Date().timeIntervalSince(start)
        let frames = try PulseTestServer.readRawFloat32(file).count / 2
        print("monitor delivered \(frames) frames in \(seconds) s")
        XCTAssertEqual(Double(frames) / 48000, seconds, accuracy: 0.2)
        server.stop()
        XCTAssertEqual(kill(pid, 0), -1, "the daemon is gone")
    }
}
