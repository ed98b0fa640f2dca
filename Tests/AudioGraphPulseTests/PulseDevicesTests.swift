// Tests of PulseDevices against a real private PulseAudio daemon.
import AudioGraphPulse
import AudioGraphTesting
import XCTest

final class PulseDevicesTests: XCTestCase {
    func testListsNullSinkAndItsMonitorWithFormatsAndDefaults() throws {
        let server = try PulseTestServer()
        defer { server.stop() }
        XCTAssertEqual(try server.run("pactl", ["load-module", "module-null-sink", "sink_name=second",
                                                "format=s16le", "rate=44100", "channels=1"]).status, 0)
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let devices = try PulseDevices.list(context: context)
        for d in devices { print("device: \(d.kind) \(d.name) \(d.sampleFormat) \(d.sampleRate) Hz \(d.channels) ch default=\(d.isDefault) monitorOf=\(d.monitorOf ?? "-")") }
        let sink = try XCTUnwrap(devices.first { $0.kind == .sink && $0.name == "agtest" })
        XCTAssertEqual(sink.sampleFormat, "float32le")
        XCTAssertEqual(sink.sampleRate, 48000)
        XCTAssertEqual(sink.channels, 2)
        XCTAssertTrue(sink.isDefault)
        XCTAssertFalse(sink.description.isEmpty)
        let monitor = try XCTUnwrap(devices.first { $0.kind == .source && $0.name == "agtest.monitor" })
        XCTAssertEqual(monitor.monitorOf, "agtest")
        XCTAssertTrue(monitor.isDefault)
        let second = try XCTUnwrap(devices.first { $0.kind == .sink && $0.name == "second" })
        XCTAssertEqual(second.sampleFormat, "s16le")
        XCTAssertEqual(second.sampleRate, 44100)
        XCTAssertEqual(second.channels, 1)
        XCTAssertFalse(second.isDefault)
        XCTAssertEqual(devices.filter { $0.kind == .sink }.count, 2)
        XCTAssertEqual(devices.filter { $0.kind == .source }.count, 2)
    }
}
