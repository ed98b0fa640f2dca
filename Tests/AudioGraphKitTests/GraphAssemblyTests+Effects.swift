// Graph files with compressor, limiter, convolver and waveShaper nodes: checked, built through their descriptors, rendered offline.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class GraphAssemblyEffectsTests: XCTestCase {
    /// tone -> waveShaper (curve, 2x) -> convolver (a relative IR file) -> compressor (automated
    /// threshold) -> limiter (+20 dB, ceiling -3 dB) -> out: renders, and no sample is above the ceiling.
    func testEffectsChainFromAFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ir: [[Float]] = [(0..<4800).map { Float(exp(-Double($0) / 600)) * ($0 % 7 == 0 ? 1 : -0.3) },
                             (0..<4800).map { Float(exp(-Double($0) / 500)) * ($0 % 5 == 0 ? 1 : -0.2) }]
        try WAVFile(sampleRate: 44100, channels: ir).write(to: dir.appendingPathComponent("room.wav"))
        let v = try parseGraph(#"""
        { "version": 1, "sampleRate": 48000, "duration": 1,
          "nodes": [
            { "id": "tone", "type": "oscillator", "properties": { "channels": 2 }, "parameters": { "frequency": 220 } },
            { "id": "shape", "type": "waveShaper", "properties": { "curve": [-1, -0.9, 0, 0.9, 1], "oversample": "2x" } },
            { "id": "room", "type": "convolver", "properties": { "file": "room.wav", "normalize": false } },
            { "id": "comp", "type": "compressor", "parameters": { "ratio": 8 },
              "automation": { "threshold": [ { "linearRampToValueAtTime": { "value": -40, "time": 0.5 } } ] } },
            { "id": "lim", "type": "limiter", "parameters": { "preGain": 20, "ceiling": -3 } },
            { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "tone", "to": "shape" }, { "from": "shape", "to": "room" }, { "from": "room", "to": "comp" },
                           { "from": "comp", "to": "lim" }, { "from": "lim", "to": "out" } ] }
        """#, in: dir)
        let y = try renderToFile(v, dir.appendingPathComponent("o.wav").path).channels
        XCTAssertEqual(y.count, 2)
        let peak = y.flatMap { $0 }.map(abs).max()!
        XCTAssertLessThanOrEqual(peak, Float(pow(10, -3.0 / 20)))
        XCTAssertGreaterThan(peak, 0.6)
    }

    /// Every problem is reported at its place, all at once: a missing `file`, a response file
    /// that does not exist, one with 3 channels, a one-point curve, an unknown oversampling, a
    /// ratio out of Web Audio's range.
    func testProblemsAreReportedAtTheirPlace() throws {
        let text = #"""
        { "version": 1, "nodes": [
            { "id": "b", "type": "convolver" },
            { "id": "a", "type": "convolver", "properties": { "file": "nowhere.wav" } },
            { "id": "e", "type": "convolver", "properties": { "file": "three.wav" } },
            { "id": "c", "type": "waveShaper", "properties": { "curve": [1], "oversample": "8x" } },
            { "id": "d", "type": "compressor", "parameters": { "ratio": 30 } },
            { "id": "out", "type": "genericOutput" } ], "connections": [] }
        """#
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try WAVFile(sampleRate: 48000, channels: [[Float]](repeating: [1, 0.5], count: 3)).write(to: dir.appendingPathComponent("three.wav"))
        XCTAssertThrowsError(try GraphLoader.parse(text: text, fileName: "graph.json", baseDirectory: dir.path)) { error in
            let lines = "\(error)"
            XCTAssertTrue(lines.contains("nodes[0] (id \"b\").properties: missing required key \"file\""), lines)
            XCTAssertTrue(lines.contains("curve"), lines)
            XCTAssertTrue(lines.contains("8x"), lines)
            XCTAssertTrue(lines.contains("ratio"), lines)
            XCTAssertTrue(lines.contains("nodes[1] (id \"a\").properties.file") && lines.contains("nowhere.wav"), lines)
            XCTAssertTrue(lines.contains("nodes[2] (id \"e\").properties.file") && lines.contains("has 3 channels"), lines)
        }
    }
}
