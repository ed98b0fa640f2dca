// The Web Audio node types (gain, stereoPanner, constantSource, iirFilter, channelSplitter, channelMerger) from graph files: loaded, checked, rendered.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class WebAudioNodesGraphFileTests: XCTestCase {
    func render(_ text: String, channels: Int = 2) throws -> [[Float]] {
        let validated = try GraphLoader.parse(text: text)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("webaudio-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try OfflineRenderer(validated, outputPath: path, sampleType: .float32).render(to: path)
        return try AudioFileReader.read(path: path).channels
    }

    func errors(_ text: String) -> [String] {
        do {
            _ = try GraphLoader.parse(text: text)
            return []
        } catch {
            return error.lines
        }
    }

    /// constantSource (automated offset) -> gain (automated) -> iirFilter (one-pole) ->
    /// stereoPanner -> channelSplitter -> channelMerger (channels swapped) -> out: every frame
    /// is the formulas' chain computed here.
    func testAChainOfTheTypesRendersItsFormulas() throws {
        let text = """
        { "version": 1, "sampleRate": 48000, "duration": 0.05,
          "nodes": [
            { "id": "c", "type": "constantSource", "automation": { "offset": [ { "setValueAtTime": { "value": 0.2, "time": 0 } }, { "linearRampToValueAtTime": { "value": 0.8, "time": 0.04 } } ] } },
            { "id": "g", "type": "gain", "parameters": { "gain": -1 }, "automation": { "gain": [ { "setValueAtTime": { "value": -1, "time": 0.02 } }, { "linearRampToValueAtTime": { "value": 0.5, "time": 0.03 } } ] } },
            { "id": "f", "type": "iirFilter", "properties": { "feedforward": [0.1], "feedback": [2, -1.8] } },
            { "id": "p", "type": "stereoPanner", "parameters": { "pan": -0.25 } },
            { "id": "s", "type": "channelSplitter", "properties": { "outputs": 2 } },
            { "id": "m", "type": "channelMerger", "inputBusCount": 2 },
            { "id": "out", "type": "genericOutput" }
          ],
          "connections": [ { "from": "c", "to": "g" }, { "from": "g", "to": "f" }, { "from": "f", "to": "p" }, { "from": "p", "to": "s" },
                           { "from": "s:0", "to": "m:1" }, { "from": "s:1", "to": "m:0" }, { "from": "m", "to": "out" } ]
        }
        """
        let y = try render(text)
        XCTAssertEqual(y.count, 2)
        XCTAssertEqual(y[0].count, 2400)
        func ramp(_ t: Double, _ t0: Double, _ v0: Double, _ t1: Double, _ v1: Double) -> Double {
            t <= t0 ? v0 : t >= t1 ? v1 : v0 + (v1 - v0) * (t - t0) / (t1 - t0)
        }
        var state = 0.0
        let theta = (-0.25 + 1) / 2 * Double.pi / 2
        var worst = 0.0
        for n in 0..<2400 {
            let t = Double(n) / 48000
            let offset = Double(Float(ramp(t, 0, 0.2, 0.04, 0.8)))
            let gain = Double(Float(ramp(t, 0.02, -1, 0.03, 0.5)))
            let x = Double(Float(offset) * Float(gain))
            state = 0.05 * x + 0.9 * state
            let v = Double(Float(state))
            worst = max(worst, abs(Double(y[1][n]) - v * cos(theta)), abs(Double(y[0][n]) - v * sin(theta)))
        }
        XCTAssertLessThan(worst, 1e-6)
    }

    /// The file checks: coefficients the spec refuses, a splitter's bus beyond its outputs (the
    /// engine's rule at the connection), a merger with too many inputs, a pan out of range.
    func testTheFileChecksApplyWithLocations() {
        func graph(_ node: String, _ connections: String = #"{ "from": "x", "to": "out" }"#) -> String {
            """
            { "version": 1, "nodes": [ { "id": "osc", "type": "oscillator" }, \(node), { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "x" }, \(connections) ] }
            """
        }
        XCTAssertEqual(errors(graph(#"{ "id": "x", "type": "iirFilter", "properties": { "feedforward": [0, 0], "feedback": [0, 1] } }"#)).sorted(), [
            #"graph.json: nodes[1] (id "x").properties.feedback: the first feedback coefficient is 0"#,
            #"graph.json: nodes[1] (id "x").properties.feedforward: the feedforward coefficients are all 0"#,
        ])
        XCTAssertEqual(errors(graph(#"{ "id": "x", "type": "iirFilter", "properties": { "feedforward": [1] } }"#)),
                       [#"graph.json: nodes[1] (id "x").properties: missing required key "feedback""#])
        XCTAssertEqual(errors(graph(#"{ "id": "x", "type": "iirFilter" }"#)).count, 2, "both coefficient lists are required")
        XCTAssertEqual(errors(graph(#"{ "id": "x", "type": "iirFilter", "properties": { "feedforward": [1, "a"], "feedback": [\#((0..<21).map { _ in "1" }.joined(separator: ", "))] } }"#)).sorted(), [
            #"graph.json: nodes[1] (id "x").properties.feedback: expected 1...20 numbers, found 21"#,
            #"graph.json: nodes[1] (id "x").properties.feedforward[1]: expected a number, found a string"#,
        ])
        XCTAssertEqual(errors(graph(#"{ "id": "x", "type": "stereoPanner", "parameters": { "pan": 2 } }"#)),
                       [#"graph.json: nodes[1] (id "x").parameters.pan: 2 is outside -1...1"#])
        let split = errors(graph(#"{ "id": "x", "type": "channelSplitter", "properties": { "outputs": 2 } }"#, #"{ "from": "x:3", "to": "out" }"#))
        XCTAssertEqual(split.count, 1)
        XCTAssertTrue(split.first?.hasPrefix("graph.json: connections[1]") == true && split.first?.contains("bus 3") == true, "\(split)")
        XCTAssertEqual(errors(graph(#"{ "id": "x", "type": "channelMerger", "inputBusCount": 33 }"#)).count, 1)
        // A tap on a splitter's bus beyond its outputs is refused at the tap (the file's bus check allows 32).
        let tap = errors(graph(#"{ "id": "x", "type": "channelSplitter", "properties": { "outputs": 2 } }"#, #"{ "from": "x:1", "to": "out" }"#)
            .replacingOccurrences(of: #""connections""#, with: #""taps": [ { "node": "x", "bus": 5, "file": "t.wav" } ], "connections""#))
        XCTAssertEqual(tap.count, 1)
        XCTAssertTrue(tap.first?.hasPrefix("graph.json: taps[0]") == true, "\(tap)")
    }

    /// `smoothing` on eq and delay: false renders Web Audio's un-smoothed step (the delay reads
    /// at the new delay from the update's frame), true or absent keeps the 10 ms crossfade; a
    /// value that is not a boolean is reported at its place.
    func testSmoothingSwitchOnEqAndDelay() throws {
        func graph(_ smoothing: String) -> String {
            """
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "c", "type": "constantSource", "automation": { "offset": [ { "setValueAtTime": { "value": 0, "time": 0 } }, { "linearRampToValueAtTime": { "value": 1, "time": 0.1 } } ] } },
                         { "id": "e", "type": "eq", "properties": { \(smoothing) "bands": [ { "type": "lowPass", "frequency": 20000 } ] } },
                         { "id": "d", "type": "delay", "parameters": { "delayTime": 0.0078125, "feedback": 0, "wetDryMix": 100 }, "properties": { \(smoothing.dropLast(2)) } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "c", "to": "d" }, { "from": "d", "to": "out" }, { "from": "c", "to": "e" } ],
              "updates": [ { "frame": 2400, "actions": [ { "setParameter": { "node": "d", "address": "delayTime", "value": 0.015625 } } ] } ]
            }
            """
        }
        let exact = try render(graph(#""smoothing": false, "#))[0]
        let smooth = try render(graph(""))[0]
        // The ramp's value is (n/4800) in single precision; the delay reads 375 then 750 frames back.
        XCTAssertEqual(Double(exact[2500]), Double(Float(Double(2500 - 750) / 4800)), accuracy: 1e-6)
        XCTAssertEqual(Double(exact[2300]), Double(Float(Double(2300 - 375) / 4800)), accuracy: 1e-6)
        XCTAssertGreaterThan(abs(smooth[2500] - exact[2500]), 0.01, "the default crossfades")
        XCTAssertEqual(errors(graph(#""smoothing": 1, "#)).count, 2, "\(errors(graph(#""smoothing": 1, "#)))")
    }

    /// Audio into a parameter from a graph file (`"parameter"` on a connection): a tremolo
    /// (a 1000 Hz carrier through a gain of 0.5 plus a 10 Hz LFO of 0.25) renders the formula;
    /// an unknown parameter, a bus on the destination and a loop through a parameter are
    /// reported at the connection.
    func testParameterConnectionsFromAGraphFile() throws {
        func graph(_ extra: String = "", parameter: String = "gain") -> String {
            """
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "carrier", "type": "oscillator", "parameters": { "frequency": 1000 } },
                         { "id": "lfo", "type": "oscillator", "parameters": { "frequency": 10, "amplitude": 0.25 } },
                         { "id": "amp", "type": "gain", "parameters": { "gain": 0.5 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "carrier", "to": "amp" }, { "from": "amp", "to": "out" },
                               { "from": "lfo", "to": "amp", "parameter": "\(parameter)" }\(extra) ]
            }
            """
        }
        let y = try render(graph())[0]
        var worst = 0.0
        for n in 0..<4800 {
            let expected = sin(2 * Double.pi * 1000 * Double(n) / 48000) * (0.5 + 0.25 * sin(2 * Double.pi * 10 * Double(n) / 48000))
            worst = max(worst, abs(Double(y[n]) - expected))
        }
        XCTAssertLessThan(worst, 2e-7)
        XCTAssertEqual(errors(graph(parameter: "volume")),
                       [#"graph.json: connections[2].parameter: "volume" is not a parameter: gain node "amp" has gain"#])
        XCTAssertEqual(errors(graph().replacingOccurrences(of: #""to": "amp", "parameter""#, with: #""to": "amp:1", "parameter""#)),
                       [#"graph.json: connections[2].to: a connection into a parameter names the node only, not an input bus"#])
        let loop = errors(graph(#", { "from": "amp", "to": "lfo", "parameter": "frequency" }"#))
        XCTAssertEqual(loop.count, 1)
        XCTAssertTrue(loop.first?.hasPrefix("graph.json: connections[3]") == true && loop.first?.contains("cycle") == true, "\(loop)")
    }

    /// A `bufferSource` from a graph file: detune 1200 cents (rate 2) over a ramp buffer plays
    /// every second frame exactly; a missing file is refused at the node.
    func testBufferSourceFromAGraphFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let file = dir.appendingPathComponent("ramp.wav").path
        let x = (0..<4800).map { Float($0) / 8192 }
        try TestFiles.writeSoundFile(file, [x], sampleRate: 48000)
        func graph(_ path: String) -> String {
            """
            { "version": 1, "sampleRate": 48000, "duration": 0.04,
              "nodes": [ { "id": "b", "type": "bufferSource", "parameters": { "detune": 1200 }, "properties": { "file": "\(path)" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "b", "to": "out" } ] }
            """
        }
        let y = try render(graph(file))[0]
        XCTAssertEqual(y.count, 1920)
        for n in 0..<1920 { XCTAssertEqual(y[n], x[2 * n], "frame \(n)"); if y[n] != x[2 * n] { break } }
        let missing = errors(graph(dir.appendingPathComponent("none.wav").path))
        XCTAssertEqual(missing.count, 1)
        XCTAssertTrue(missing.first?.contains("nodes[0]") == true, "\(missing)")
    }

    /// A matrixMixer from a graph file: a stereo and a mono bus into a stereo bus, constant,
    /// automated and master gains (each frame the formula computed here), and its file checks: a
    /// crosspoint beyond the matrix, a bus without channels, an input of another channel count.
    func testMatrixMixerFromAGraphFile() throws {
        let text = """
        { "version": 1, "sampleRate": 48000, "duration": 0.05,
          "nodes": [
            { "id": "a", "type": "constantSource", "properties": { "channels": 2 }, "parameters": { "offset": 0.5 } },
            { "id": "b", "type": "constantSource", "parameters": { "offset": 0.25 } },
            { "id": "mx", "type": "matrixMixer", "properties": { "inputs": [2, 1], "outputs": [2] },
              "parameters": { "crosspoint.0.0": 1, "crosspoint.1.1": -1, "crosspoint.2.0": 2, "volume": 0.5, "inputChannel.1.volume": 0.8 },
              "automation": { "crosspoint.2.1": [ { "setValueAtTime": { "value": 0, "time": 0.02 } }, { "linearRampToValueAtTime": { "value": 1, "time": 0.04 } } ] } },
            { "id": "out", "type": "genericOutput" }
          ],
          "connections": [ { "from": "a", "to": "mx:0" }, { "from": "b", "to": "mx:1" }, { "from": "mx", "to": "out" } ]
        }
        """
        let y = try render(text)
        XCTAssertEqual(y.count, 2)
        var worst = 0.0
        for n in 0..<2400 {
            let t = Double(n) / 48000
            let c21 = Double(Float(t <= 0.02 ? 0 : t >= 0.04 ? 1 : (t - 0.02) / 0.02))
            worst = max(worst, abs(Double(y[0][n]) - (0.5 + 2 * 0.25) * 0.5), abs(Double(y[1][n]) - (-0.8 * 0.5 + c21 * 0.25) * 0.5))
        }
        XCTAssertLessThan(worst, 1e-7)
        func graph(_ node: String, source: String = #"{ "id": "a", "type": "constantSource", "properties": { "channels": 2 } }"#) -> String {
            """
            { "version": 1, "nodes": [ \(source), \(node), { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "mx" }, { "from": "mx", "to": "out" } ] }
            """
        }
        let unknown = errors(graph(#"{ "id": "mx", "type": "matrixMixer", "parameters": { "crosspoint.2.0": 1 } }"#))
        XCTAssertEqual(unknown.count, 1)
        XCTAssertTrue(unknown.first?.hasPrefix(#"graph.json: nodes[1] (id "mx").parameters.crosspoint.2.0"#) == true
                      && unknown.first?.contains("crosspoint.I.O (I < 2, O < 2)") == true, "\(unknown)")
        XCTAssertEqual(errors(graph(#"{ "id": "mx", "type": "matrixMixer", "properties": { "inputs": [2, 0] } }"#)),
                       [#"graph.json: nodes[1] (id "mx").properties.inputs[1]: 0 is outside 1...64"#])
        let mismatch = errors(graph(#"{ "id": "mx", "type": "matrixMixer", "properties": { "inputs": [1] } }"#))
        XCTAssertEqual(mismatch.count, 1)
        XCTAssertTrue(mismatch.first?.contains("input bus 0 has 1 channel(s); what is connected has 2") == true, "\(mismatch)")
    }
}
