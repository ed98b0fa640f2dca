// Tests of GraphAssembly.makeNode through the Kit: a timePitch node from a graph file renders its pitch shift; a rate out of range is one line.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class GraphAssemblyTests: XCTestCase {
    func timePitchGraph(_ parameters: String, properties: String = "{}") -> String {
        """
        { "version": 1, "sampleRate": 48000, "duration": 0.5, "nodes": [
          { "id": "osc", "type": "oscillator", "parameters": { "frequency": 500 } },
          { "id": "tp", "type": "timePitch", "parameters": \(parameters), "properties": \(properties) },
          { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "tp" }, { "from": "tp", "to": "out" } ] }
        """
    }

    func testTimePitchFromAGraphFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(timePitchGraph(#"{ "rate": 1.5, "pitch": -200, "overlap": 4 }"#), in: dir)
        let node = try XCTUnwrap(try GraphAssembly.makeNode(v.description.nodes[1], sampleRate: 48000) as? TimePitchNode)
        XCTAssertEqual(node.typeName, "timePitch")
        XCTAssertEqual(node.parameter("rate")?.value, 1.5)
        XCTAssertEqual(node.parameter("pitch")?.value, -200)
        XCTAssertEqual(node.parameter("overlap")?.value, 4)
        let y = try renderToFile(v, dir.appendingPathComponent("tp.wav").path)
        XCTAssertEqual(y.channels[0].count, 24000)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y.channels[0][4800...], sampleRate: 48000) ?? 0,
                       500 * pow(2, -200.0 / 1200), accuracy: 0.5)
    }

    func testTimePitchRateOutOfRangeIsOneLineNamingThePlace() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        XCTAssertThrowsError(try GraphLoader.parse(text: timePitchGraph(#"{ "rate": 64 }"#), fileName: "tp.json",
                                                   baseDirectory: dir.path)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("tp.json") && text.contains("rate") && text.contains("64"), text)
        }
    }

    func testTimePitchQualityFromAGraphFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(timePitchGraph(#"{ "rate": 1.25 }"#, properties: #"{ "quality": "faster" }"#), in: dir)
        let node = try XCTUnwrap(try GraphAssembly.makeNode(v.description.nodes[1], sampleRate: 48000) as? TimePitchNode)
        XCTAssertEqual(node.quality, .faster)
        let plain = try parseGraph(timePitchGraph(#"{ "rate": 1.25 }"#), in: dir)
        XCTAssertEqual((try GraphAssembly.makeNode(plain.description.nodes[1], sampleRate: 48000) as? TimePitchNode)?.quality, .finer)
        let y = try renderToFile(v, dir.appendingPathComponent("tp.wav").path)
        // R2 spreads a steady tone (Docs/Performance.md "Time-stretch"): within 35 cents.
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y.channels[0][4800...], sampleRate: 48000) ?? 0, 500, accuracy: 10)
    }

    /// `fastest` (WSOLA) from a graph file: the 500 Hz tone keeps its pitch at rate 1.25, and
    /// with `pitch` 100 it is 500 · 2^(1/12) (before, that graph was refused when it loaded).
    func testTimePitchFastestFromAGraphFileKeepsAndShiftsThePitch() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(timePitchGraph(#"{ "rate": 1.25 }"#, properties: #"{ "quality": "fastest" }"#), in: dir)
        let node = try XCTUnwrap(try GraphAssembly.makeNode(v.description.nodes[1], sampleRate: 48000) as? TimePitchNode)
        XCTAssertEqual(node.quality, .fastest)
        let y = try renderToFile(v, dir.appendingPathComponent("tp.wav").path)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y.channels[0][4800...], sampleRate: 48000) ?? 0, 500, accuracy: 0.5)
        let w = try parseGraph(timePitchGraph(#"{ "rate": 1.25, "pitch": 100 }"#, properties: #"{ "quality": "fastest" }"#), in: dir)
        let z = try renderToFile(w, dir.appendingPathComponent("shifted.wav").path)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(z.channels[0][4800...], sampleRate: 48000) ?? 0, 500 * pow(2, 1.0 / 12),
                       accuracy: 0.5)
    }

    func testAnUnknownTimePitchQualityIsOneLineNamingThePlace() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        XCTAssertThrowsError(try GraphLoader.parse(text: timePitchGraph("{}", properties: #"{ "quality": "best" }"#),
                                                   fileName: "tp.json", baseDirectory: dir.path)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("tp.json") && text.contains("quality") && text.contains("faster"), text)
            XCTAssertFalse(text.contains("\n"), text)
        }
    }
}
