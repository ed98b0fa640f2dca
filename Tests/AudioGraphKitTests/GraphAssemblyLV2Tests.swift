// Graph files with lv2 nodes: rendered against formulas, and the validator's one-line refusals.
@testable import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class GraphAssemblyLV2Tests: XCTestCase {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"

    /// A stereo sine through swh amp at -6.0206 dB (two instances): half the sine on both channels.
    func testAmpGraphHalvesAStereoSine() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "osc", "type": "oscillator", "properties": { "channels": 2 },
                           "parameters": { "frequency": 440, "amplitude": 0.8 } },
                         { "id": "amp", "type": "lv2", "properties": { "plugin": "\(Self.amp)" },
                           "parameters": { "gain": -6.0206 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "amp" }, { "from": "amp", "to": "out" } ] }
            """, in: dir)
        let (channels, _) = try renderToFile(v, dir.appendingPathComponent("amp.wav").path)
        XCTAssertEqual(channels.count, 2)
        for c in 0..<2 {
            let e = SignalMeasurement.worstError(channels[c]) { n in 0.4 * sin(2 * Double.pi * 440 * Double(n) / 48000) }
            XCTAssertLessThan(e.error, 1e-4, "channel \(c) at \(e.at)")
        }
    }

    /// Automation of a plugin parameter from the file: gain steps from 0 dB to -20 dB at 0.01 s (frame 480).
    func testAutomationOfAPluginParameterIsSampleExact() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.02, "maximumFramesPerSlice": 256,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.8 } },
                         { "id": "amp", "type": "lv2", "properties": { "plugin": "\(Self.amp)" },
                           "automation": { "gain": [ { "setValueAtTime": { "value": -20, "time": 0.01 } } ] } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "amp" }, { "from": "amp", "to": "out" } ] }
            """, in: dir)
        let (channels, _) = try renderToFile(v, dir.appendingPathComponent("step.wav").path)
        // Frame 480 lies inside the second slice (256...511): the run is split there.
        let e = SignalMeasurement.worstError(channels[0]) { n in 0.8 * sin(2 * Double.pi * 440 * Double(n) / 48000) * (n < 480 ? 1 : 0.1) }
        XCTAssertLessThan(e.error, 1e-5, "at \(e.at)")
    }

    /// A file update sets the plugin's gain at frame 300 (inside the second 256-frame slice), with a
    /// ramp at frame 600; an update naming an unknown symbol is refused.
    func testUpdatesSetPluginParametersAtTheirFrame() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.02, "maximumFramesPerSlice": 256,
              "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 440, "amplitude": 0.8 } },
                         { "id": "amp", "type": "lv2", "properties": { "plugin": "\(Self.amp)" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "amp" }, { "from": "amp", "to": "out" } ],
              "updates": [ { "frame": 300, "actions": [ { "setParameter": { "node": "amp", "address": "gain", "value": -20 } } ] },
                           { "frame": 600, "actions": [ { "setParameter": { "node": "amp", "address": "bypass", "value": 1 } } ] } ] }
            """, in: dir)
        let (channels, _) = try renderToFile(v, dir.appendingPathComponent("upd.wav").path)
        let e = SignalMeasurement.worstError(channels[0]) { n in
            0.8 * sin(2 * Double.pi * 440 * Double(n) / 48000) * (n < 300 || n >= 600 ? 1 : 0.1)
        }
        XCTAssertLessThan(e.error, 1e-5, "at \(e.at)")
        let lines = errors(graph(#"{ "id": "fx", "type": "lv2", "properties": { "plugin": "\#(Self.amp)" } }"#)
            .replacingOccurrences(of: "\"connections\"", with: #""updates": [ { "frame": 10, "actions": [ { "setParameter": { "node": "fx", "address": "level", "value": 1 } } ] } ], "connections""#))
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.contains("level") ?? false, "\(lines)")
    }

    func errors(_ text: String) -> [String] {
        do {
            _ = try GraphLoader.parse(text: text, fileName: "bad.json")
            return []
        } catch {
            return error.description.split(separator: "\n").map(String.init)
        }
    }

    func graph(_ lv2: String) -> String {
        """
        { "version": 1, "sampleRate": 48000,
          "nodes": [ { "id": "osc", "type": "oscillator" }, \(lv2), { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "fx" }, { "from": "fx", "to": "out" } ] }
        """
    }

    func testUnknownURIIsOneLineNamingIt() {
        let lines = errors(graph(#"{ "id": "fx", "type": "lv2", "properties": { "plugin": "urn:no:such" } }"#))
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines[0].hasPrefix("bad.json: nodes[1] (id \"fx\").properties.plugin"), lines[0])
        XCTAssertTrue(lines[0].contains("<urn:no:such>"), lines[0])
    }

    func testUnknownSymbolAndOutOfRangeValueAreReported() {
        let lines = errors(graph(#"{ "id": "fx", "type": "lv2", "properties": { "plugin": "\#(Self.amp)" }, "parameters": { "volume": 1, "gain": 80 } }"#))
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains("parameters.volume") && $0.contains("has gain, bypass") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains("parameters.gain") && $0.contains("-70...70") }, "\(lines)")
    }

    func testMissingPluginKeyIsReported() {
        let lines = errors(graph(#"{ "id": "fx", "type": "lv2" }"#))
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines[0].contains("plugin"), lines[0])
    }

    func testTwoInputPluginOnAMonoBusIsReported() {
        let lines = errors(graph(#"{ "id": "fx", "type": "lv2", "properties": { "plugin": "http://plugin.org.uk/swh-plugins/matrixStMS" } }"#))
        XCTAssertEqual(lines.count, 1, "\(lines)")
        // The plugin node's own rule (LV2Node.resolveOutputFormats), reported at the node.
        XCTAssertTrue(lines[0].contains(#"nodes[1] (id "fx"): node "fx": LV2 plugin"#) && lines[0].contains("takes 2 audio inputs"), lines[0])
    }
}
