// Tests of NodeFactory: graph-file node types become the engine's node classes.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class NodeFactoryTests: XCTestCase {
    let analyserGraph = """
    { "version": 1, "sampleRate": 48000, "duration": 0.5, "nodes": [
      { "id": "osc", "type": "oscillator", "parameters": { "frequency": 997, "amplitude": 0.7 }, "properties": { "channels": 2 } },
      { "id": "an", "type": "analyser", "properties": { "fftSize": 512, "smoothingTimeConstant": 0.5, "minDecibels": -90, "maxDecibels": -10 } },
      { "id": "out", "type": "genericOutput" } ],
      "connections": [ { "from": "osc", "to": "an" }, { "from": "an", "to": "out" } ] }
    """

    func testAnalyserFromAGraphFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let v = try parseGraph(analyserGraph, in: dir)
        let node = try NodeFactory.makeNode(v.description.nodes[1], sampleRate: 48000)
        let analyser = try XCTUnwrap(node as? AnalyserNode)
        XCTAssertEqual(analyser.properties,
                       AnalyserProperties(fftSize: 512, smoothingTimeConstant: 0.5, minDecibels: -90, maxDecibels: -10))
        XCTAssertEqual(analyser.typeName, "analyser")
    }

    func testAnalyserInAGraphFileRendersItsInputUnchanged() throws {
        let dir = try makeTemporaryDirectory(self)
        let with = try renderToFile(try parseGraph(analyserGraph, in: dir), dir.appendingPathComponent("with.wav").path)
        let without = analyserGraph
            .replacingOccurrences(of: #"{ "id": "an", "type": "analyser", "properties": { "fftSize": 512, "smoothingTimeConstant": 0.5, "minDecibels": -90, "maxDecibels": -10 } },"#, with: "")
            .replacingOccurrences(of: #"{ "from": "osc", "to": "an" }, { "from": "an", "to": "out" }"#, with: #"{ "from": "osc", "to": "out" }"#)
        let plain = try renderToFile(try parseGraph(without, in: dir), dir.appendingPathComponent("without.wav").path)
        XCTAssertEqual(with.channels.count, 2)
        XCTAssertEqual(with.channels[0].count, 24000)
        XCTAssertEqual(with.channels, plain.channels)
        XCTAssertGreaterThan(with.channels[0].map(abs).max()!, 0.69)
    }

    func timePitchGraph(_ parameters: String) -> String {
        """
        { "version": 1, "sampleRate": 48000, "duration": 0.5, "nodes": [
          { "id": "osc", "type": "oscillator", "parameters": { "frequency": 500 } },
          { "id": "tp", "type": "timePitch", "parameters": \(parameters) },
          { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "tp" }, { "from": "tp", "to": "out" } ] }
        """
    }

    func testTimePitchFromAGraphFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let v = try parseGraph(timePitchGraph(#"{ "rate": 1.5, "pitch": -200, "overlap": 4 }"#), in: dir)
        let node = try XCTUnwrap(try NodeFactory.makeNode(v.description.nodes[1], sampleRate: 48000) as? TimePitchNode)
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
        let dir = try makeTemporaryDirectory(self)
        XCTAssertThrowsError(try GraphLoader.parse(text: timePitchGraph(#"{ "rate": 64 }"#), fileName: "tp.json",
                                                   baseDirectory: dir.path)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("tp.json") && text.contains("rate") && text.contains("64"), text)
        }
    }
}
