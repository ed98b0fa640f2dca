// Tests of GraphLoader.build: descriptions become initialized engine graphs, updates become change lists.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class GraphLoaderBuildTests: XCTestCase {
    private let text = """
        { "version": 1, "sampleRate": 44100, "maximumFramesPerSlice": 128,
          "nodes": [ { "id": "a", "type": "oscillator", "parameters": { "frequency": 300, "amplitude": 0.5 },
                       "properties": { "waveform": "square", "channels": 2, "startTime": 0.5 } },
                     { "id": "b", "type": "oscillator", "parameters": { "frequency": 500 },
                       "automation": { "amplitude": [ { "setValueAtTime": { "value": 0.25, "time": 0 } },
                                                      { "linearRampToValueAtTime": { "value": 0.75, "time": 1 } } ] } },
                     { "id": "mix", "type": "mixer", "inputBusCount": 3, "parameters": { "input.2.pan": -0.25 } },
                     { "id": "p", "type": "player", "properties": { "file": "p.wav" } },
                     { "id": "speakers", "type": "output" } ],
          "connections": [ { "from": "a", "to": "mix:0" }, { "from": "b", "to": "mix:2" }, { "from": "mix", "to": "speakers" } ],
          "updates": [ { "frame": 10, "actions": [
              { "setParameter": { "node": "mix", "address": "input.0.volume", "value": 0.5, "rampDuration": 0.25 } },
              { "disconnect": { "to": "mix:0" } },
              { "addNode": { "id": "c", "type": "oscillator", "properties": { "waveform": "noise", "seed": 3 } } },
              { "connect": { "from": "c", "to": "mix:1" } },
              { "removeNode": "b" },
              { "setProperty": { "node": "p", "name": "loop", "value": true } } ] } ] }
        """

    func testBuildCreatesConnectsAndInitializes() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("p.wav").path, [[0.5, 0.25]], sampleRate: 44100)
        let v = try parseGraph(text, in: dir)
        // As described, the PulseAudio output node itself is built (it connects to a server only when started).
        let live = try GraphLoader.build(v)
        XCTAssertEqual(live.outputNode.typeName, "output")
        XCTAssertFalse(live.outputNode is GenericOutputNode)
        live.graph.uninitialize()
        let built = try GraphLoader.build(v, maximumFramesPerSlice: 64, outputs: .offline)
        let g = built.graph
        XCTAssertEqual(g.sampleRate, 44100)
        XCTAssertEqual(g.maximumFramesPerSlice, 64, "the override wins")
        XCTAssertEqual(g.state, .initialized)
        XCTAssertTrue(built.outputNode is GenericOutputNode)
        XCTAssertEqual(built.outputNode.id, "speakers")
        XCTAssertEqual(g.connections.map(\.description).sorted(), ["a:0 -> mix:0", "b:0 -> mix:2", "mix:0 -> speakers:0"])
        let a = try XCTUnwrap(g.node("a") as? OscillatorNode)
        XCTAssertEqual(a.properties, OscillatorProperties(waveform: .square, channels: 2, startTime: 0.5))
        XCTAssertEqual(a.parameter("frequency")?.value, 300)
        XCTAssertEqual(a.parameter("amplitude")?.value, 0.5)
        XCTAssertEqual(a.outputFormats, [.canonical(sampleRate: 44100, channelCount: 2)])
        XCTAssertEqual(g.node("mix")?.parameter("input.2.pan")?.value, -0.25)
        XCTAssertEqual(g.node("mix")?.parameter("input.1.pan")?.value, 0, "defaults elsewhere")
        XCTAssertNotNil(g.node("b")?.parameter("amplitude")?.automation)
        XCTAssertEqual(g.node("mix")?.inputBusCount, 3)
    }

    func testAutomationReachesTheRenderedSamples() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph("""
            { "version": 1, "sampleRate": 48000,
              "nodes": [ { "id": "b", "type": "oscillator", "parameters": { "frequency": 1000 },
                           "automation": { "amplitude": [ { "setValueAtTime": { "value": 0.25, "time": 0 } },
                                                          { "linearRampToValueAtTime": { "value": 0.75, "time": 0.01 } } ] } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "b", "to": "out" } ] }
            """, in: dir)
        let y = try renderToFile(v, dir.appendingPathComponent("a.wav").path, frames: 960, slice: 100).channels[0]
        // Web Audio linear ramp from (0 s, 0.25) to (0.01 s = frame 480, 0.75), then held.
        let e = SignalMeasurement.worstError(y) { n in
            (n < 480 ? 0.25 + 0.5 * Double(n) / 480 : 0.75) * sin(2 * Double.pi * 1000 * Double(n) / 48000)
        }
        XCTAssertLessThan(e.error, 1e-6, "at \(e.at)")
    }

    func testChangesForAnUpdateAreOnePendingList() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.appendingPathComponent("p.wav").path, [[0.5, 0.25]], sampleRate: 44100)
        let v = try parseGraph(text, in: dir)
        let list = try GraphAssembly.changes(for: v.description.updates[0], sampleRate: 44100, outputs: .offline)
        XCTAssertEqual(list.count, 6)
        guard case .setParameter("mix", "input.0.volume", 0.5, 0.25) = list[0] else { return XCTFail("\(list[0])") }
        guard case .disconnect("mix", 0) = list[1] else { return XCTFail("\(list[1])") }
        guard case .addNode(let c) = list[2], let osc = c as? OscillatorNode else { return XCTFail("\(list[2])") }
        XCTAssertEqual(osc.id, "c")
        XCTAssertEqual(osc.properties.waveform, .noise)
        XCTAssertEqual(osc.properties.seed, 3)
        XCTAssertNil(osc.kernel, "set up by update(), not here")
        guard case .connect("c", 0, "mix", 1) = list[3] else { return XCTFail("\(list[3])") }
        guard case .removeNode("b") = list[4] else { return XCTFail("\(list[4])") }
        guard case .setProperty("p", "loop", let value) = list[5] else { return XCTFail("\(list[5])") }
        XCTAssertEqual(value as? Bool, true)
    }

    func testPropertyValuesFromJSON() {
        XCTAssertEqual(JSONValue.bool(true).propertyValue as? Bool, true)
        XCTAssertEqual(JSONValue.string("x").propertyValue as? String, "x")
        XCTAssertNil(JSONValue.null.propertyValue as? Double)
    }
}

// Updates that change properties while rendering: the typed values reach the running kernels.
extension GraphLoaderBuildTests {
    /// A player's segment, loop and start time, and an oscillator's waveform and stop time,
    /// changed by `setProperty` updates at exact frames.
    func testSetPropertyUpdatesReachRunningPlayerAndOscillator() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        // A ramp file: sample n has the value n / 48000, so positions are readable from the output.
        try TestFiles.writeSoundFile(dir.path + "/ramp.wav", [(0..<48000).map { Float($0) / 48000 }], sampleRate: 48000)
        let v = try parseGraph(#"""
        { "version": 1, "duration": 0.5,
          "nodes": [ { "id": "p", "type": "player", "properties": { "file": "ramp.wav" } },
                     { "id": "o", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 } },
                     { "id": "m", "type": "mixer", "inputBusCount": 2, "parameters": { "input.0.pan": -1, "input.1.pan": 1 } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "p", "to": "m:0" }, { "from": "o", "to": "m:1" }, { "from": "m", "to": "out" } ],
          "updates": [
            { "frame": 1000, "actions": [
              { "setProperty": { "node": "p", "name": "segment", "value": { "start": 0.5, "duration": 0.01 } } },
              { "setProperty": { "node": "p", "name": "loop", "value": true } },
              { "setProperty": { "node": "o", "name": "stopTime", "value": 0.1 } } ] },
            { "frame": 6000, "actions": [
              { "setProperty": { "node": "o", "name": "waveform", "value": "square" } },
              { "setProperty": { "node": "o", "name": "stopTime", "value": 1.0 } } ] } ] }
        """#, in: dir)
        let (channels, _) = try renderToFile(v, dir.path + "/out.wav", slice: 333)
        let left = channels[0], right = channels[1]
        // Before frame 1000: the whole file from position n.
        for n in [0, 1, 500, 999] { XCTAssertEqual(Double(left[n]), Double(n) / 48000, accuracy: 1e-7, "frame \(n)") }
        // From frame 1000: the segment [24000, 24480) looped, still counted from the node's start (frame 0).
        for n in [1000, 1234, 4000, 23999] {
            let expected = Double(24000 + n % 480) / 48000
            XCTAssertEqual(Double(left[n]), expected, accuracy: 1e-7, "frame \(n)")
        }
        // The oscillator stops at 0.1 s (frame 4800) after the first update, then restarts as a square wave
        // at frame 6000 (stopTime moved to 1 s): silent in between.
        XCTAssertGreaterThan(right[2000..<4800].map { abs($0) }.max()!, 0.4)
        XCTAssertEqual(right[4800..<6000].map { abs($0) }.max()!, 0)
        let square = right[6000..<12000].map { abs($0) }
        // A band-limited square at amplitude 0.5 sits near 0.5 most of the time (a sine would not).
        let nearFull = square.filter { $0 > 0.45 && $0 < 0.56 }.count
        XCTAssertGreaterThan(nearFull, square.count * 7 / 10)
    }
}
