// Graph files with reverb and varispeed nodes: decoded, built by GraphAssembly.makeNode, rendered offline.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class GraphAssemblyUnitsTests: XCTestCase {
    /// A 1 kHz tone through a varispeed whose rate a change list sets to 2 at 0.25 s, then a
    /// reverb bypassed from the file (so the tone arrives untouched).
    func testVarispeedRateUpdateAndBypassedReverbFromAFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(#"""
        { "version": 1, "sampleRate": 48000, "duration": 0.5,
          "nodes": [
            { "id": "tone", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 } },
            { "id": "vs", "type": "varispeed" },
            { "id": "rv", "type": "reverb", "properties": { "preset": "cathedral" },
              "parameters": { "wetDryMix": 100, "bypass": 1 } },
            { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "tone", "to": "vs" }, { "from": "vs", "to": "rv" }, { "from": "rv", "to": "out" } ],
          "updates": [ { "frame": 12000, "actions": [ { "setParameter": { "node": "vs", "address": "rate", "value": 2 } } ] } ] }
        """#, in: dir)
        let y = try renderToFile(v, dir.appendingPathComponent("o.wav").path).channels[0]
        XCTAssertEqual(y.count, 24000)
        let before = ToneFit(y[1000..<11000], sampleRate: 48000, frequencies: [1000, 2000])
        XCTAssertEqual(before.tones[0].amplitude, 0.5, accuracy: 1e-3)
        XCTAssertLessThan(before.tones[1].amplitude, 1e-4)
        let after = ToneFit(y[13000..<23000], sampleRate: 48000, frequencies: [1000, 2000])
        XCTAssertEqual(after.tones[1].amplitude, 0.5, accuracy: 1e-3)
        XCTAssertLessThan(after.tones[0].amplitude, 1e-4)
        // Sample-exact at the update's frame: y[n] = x(t_n), t_n = n up to 12000, then 12000 + 2 (n - 12000).
        let e = SignalMeasurement.worstError(Array(y[200..<23800])) { i in
            let n = Double(i + 200), t = n <= 12000 ? n : 12000 + 2 * (n - 12000)
            return 0.5 * sin(2 * Double.pi * 1000 * t / 48000)
        }
        XCTAssertLessThan(e.error, 1e-4, "at frame \(e.at + 200)")
    }

    func testReverbPresetAndVarispeedRateAreChecked() throws {
        let text = #"""
        { "version": 1, "nodes": [
            { "id": "rv", "type": "reverb", "properties": { "preset": "bathroom" } },
            { "id": "vs", "type": "varispeed", "parameters": { "rate": 8 } },
            { "id": "out", "type": "genericOutput" } ], "connections": [] }
        """#
        XCTAssertThrowsError(try GraphLoader.parse(text: text, fileName: "graph.json", baseDirectory: "/tmp")) { error in
            let lines = "\(error)"
            XCTAssertTrue(lines.contains("bathroom"), lines)
            XCTAssertTrue(lines.contains("rate"), lines)
        }
    }
}
