// Tests of OfflineRenderer's worker threads: started only for a graph with branches to render in parallel.
@testable import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class OfflineRendererThreadTests: XCTestCase {
    func graph(_ text: String) throws -> ValidatedGraph { try GraphLoader.parse(text: text, fileName: "t.json", baseDirectory: "/") }

    /// A chain (oscillator → eq → output) renders on one thread with `renderThreads: 2` (no
    /// worker to start and join); two oscillators into a mixer, or one source feeding two nodes,
    /// keep the two threads. The chain's bytes are those of a serial render.
    func testOnlyAGraphWithBranchesStartsWorkers() throws {
        let chain = try graph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "o", "type": "oscillator" }, { "id": "eq", "type": "eq", "properties": { "bands": [ { "type": "peak", "frequency": 500, "gain": 3 } ] } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "o", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """)
        let mix = try graph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "a", "type": "oscillator" }, { "id": "b", "type": "oscillator", "parameters": { "frequency": 660 } },
                         { "id": "m", "type": "mixer", "inputBusCount": 2 }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "m:0" }, { "from": "b", "to": "m:1" }, { "from": "m", "to": "out" } ] }
            """)
        let fan = try graph("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "a", "type": "oscillator" }, { "id": "d1", "type": "delay" }, { "id": "d2", "type": "delay" },
                         { "id": "m", "type": "mixer", "inputBusCount": 2 }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "a", "to": "d1" }, { "from": "a", "to": "d2" }, { "from": "d1", "to": "m:0" },
                               { "from": "d2", "to": "m:1" }, { "from": "m", "to": "out" } ] }
            """)
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let serial = dir.appendingPathComponent("serial.wav").path, two = dir.appendingPathComponent("two.wav").path
        let r1 = try OfflineRenderer(chain, outputPath: serial, renderThreads: 1)
        try r1.render(to: serial)
        let r2 = try OfflineRenderer(chain, outputPath: two, renderThreads: 2)
        XCTAssertEqual(r2.built.graph.renderThreadCount, 1, "a chain starts no worker")
        try r2.render(to: two)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: serial)), try Data(contentsOf: URL(fileURLWithPath: two)))
        for (name, g) in [("mixer", mix), ("fan-out", fan)] {
            let r = try OfflineRenderer(g, outputPath: two, renderThreads: 2)
            XCTAssertEqual(r.built.graph.renderThreadCount, 2, name)
        }
    }

    /// A chain through a convolver keeps its render threads: the convolver computes its second
    /// output on a helper thread when the graph renders on more than one (the chain rule above
    /// had taken that away), with the bytes of the serial render.
    func testAConvolverChainKeepsItsRenderThreads() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ir = (0..<4800).map { i in Float(exp(-Double(i) / 800)) * (i % 7 == 0 ? 0.5 : -0.25) }
        try WAVFile(sampleRate: 48000, channels: [ir, ir.reversed()]).write(to: dir.appendingPathComponent("ir.wav"))
        let chain = try GraphLoader.parse(text: """
            { "version": 1, "sampleRate": 48000, "duration": 0.5,
              "nodes": [ { "id": "o", "type": "oscillator", "properties": { "waveform": "noise", "channels": 2 } },
                         { "id": "conv", "type": "convolver", "properties": { "file": "ir.wav" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "o", "to": "conv" }, { "from": "conv", "to": "out" } ] }
            """, fileName: "t.json", baseDirectory: dir.path)
        let serial = dir.appendingPathComponent("serial.wav").path, two = dir.appendingPathComponent("two.wav").path
        try OfflineRenderer(chain, outputPath: serial, renderThreads: 1).render(to: serial)
        let r2 = try OfflineRenderer(chain, outputPath: two, renderThreads: 2)
        XCTAssertEqual(r2.built.graph.renderThreadCount, 2, "the convolver splits its work across the render threads")
        try r2.render(to: two)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: serial)), try Data(contentsOf: URL(fileURLWithPath: two)))
    }
}
