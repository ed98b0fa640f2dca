// OfflineRenderer with streaming players: the rendered file equals the in-memory render and the source file, bit for bit.
@testable import AudioGraphKit
@testable import AudioGraphNodes
import AudioGraphTesting
import Foundation
import XCTest

final class StreamingPlayerRenderTests: XCTestCase {
    private var saved: StreamingPlayerSettings?

    override func setUp() {
        saved = .override(ringFrames: 1 << 15)
    }

    override func tearDown() {
        saved?.restore()
    }

    /// Frames 0..<n of a noise-like channel (every value distinct enough to show a misplaced frame).
    private func noise(_ n: Int, seed: UInt32) -> [Float] {
        var state = seed
        return (0..<n).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state) >> 8) / Float(1 << 23)
        }
    }

    /// Renders `graph` with the players streaming and in memory, at several slice sizes, and
    /// returns the files' channels (streamed per slice size, then in memory).
    private func renderBothWays(_ graph: String, in dir: URL, slices: [Int]) throws -> (streamed: [[[Float]]], memory: [[Float]]) {
        PlayerNode.streamingThreshold = 1e9
        let memory = try renderToFile(try parseGraph(graph, in: dir), dir.path + "/memory.wav", slice: 512).channels
        PlayerNode.streamingThreshold = 0.01
        var streamed: [[[Float]]] = []
        for slice in slices {
            let path = dir.path + "/streamed-\(slice).wav"
            let r = try OfflineRenderer(try parseGraph(graph, in: dir), outputPath: path, sliceSize: slice)
            try r.render(to: path)
            let p = try XCTUnwrap(r.built.graph.node("p") as? PlayerNode)
            XCTAssertTrue(p.isStreaming)
            XCTAssertEqual(p.streamStarvedFrames, 0, "slice \(slice): a render found frames missing")
            XCTAssertEqual(p.streamReadFailures, 0)
            r.built.graph.uninitialize()
            streamed.append(try AudioFileReader.read(path: path).channels)
        }
        return (streamed, memory)
    }

    /// A player with a segment, a start time and updates moving both (and looping) while rendering:
    /// the streamed renders equal the in-memory one and the file's frames, at slices 1 to 4096.
    func testUpdatedStreamingPlayerRendersTheFileBitForBit() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let x = [noise(150_000, seed: 1), noise(150_000, seed: 2)]
        try TestFiles.writeSoundFile(dir.path + "/long.wav", x, sampleRate: 48000)
        // startTime 0.05 s (2 400), segment from 0.25 s (12 000); at frame 40 000 the segment
        // becomes 1 s for 0.5 s (48 000..<72 000) and loops; at 70 000 startTime becomes 0.
        let graph = #"""
        { "version": 1, "sampleRate": 48000, "duration": 2.5,
          "nodes": [ { "id": "p", "type": "player", "properties": { "file": "long.wav", "startTime": 0.05, "segment": { "start": 0.25 } } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "p", "to": "out" } ],
          "updates": [
            { "frame": 40000, "actions": [
              { "setProperty": { "node": "p", "name": "segment", "value": { "start": 1, "duration": 0.5 } } },
              { "setProperty": { "node": "p", "name": "loop", "value": true } } ] },
            { "frame": 70000, "actions": [ { "setProperty": { "node": "p", "name": "startTime", "value": 0 } } ] } ] }
        """#
        let (streamed, memory) = try renderBothWays(graph, in: dir, slices: [1, 64, 512, 4096])
        let expected = (0..<2).map { c in
            (0..<120_000).map { n -> Float in
                switch n {
                case ..<2400: return 0
                case ..<40_000: return x[c][12_000 + n - 2400]
                case ..<70_000: return x[c][48_000 + (n - 2400) % 24_000]
                default: return x[c][48_000 + n % 24_000]
                }
            }
        }
        for c in 0..<2 {
            XCTAssertTrue(memory[c] == expected[c], "in memory vs the file, channel \(c)")
            for (i, s) in streamed.enumerated() {
                XCTAssertTrue(s[c] == memory[c], "streamed (slice \([1, 64, 512, 4096][i])) vs in memory, channel \(c)")
            }
        }
    }

    /// A 44.1 kHz file into a 48 kHz graph (the mixer's rate converter pulls the player ahead of
    /// the graph), written to a 44.1 kHz file (the renderer's own converter): identical either way.
    func testStreamingPlayerBehindRateConvertersEqualsTheInMemoryRender() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try TestFiles.writeSoundFile(dir.path + "/long44.wav", [noise(120_000, seed: 3), noise(120_000, seed: 4)], sampleRate: 44100)
        let graph = #"""
        { "version": 1, "sampleRate": 48000, "duration": 2.5,
          "nodes": [ { "id": "p", "type": "player", "properties": { "file": "long44.wav", "startTime": 0.1, "loop": true } },
                     { "id": "m", "type": "mixer" },
                     { "id": "out", "type": "genericOutput", "properties": { "format": { "sampleRate": 44100 } } } ],
          "connections": [ { "from": "p", "to": "m" }, { "from": "m", "to": "out" } ] }
        """#
        let (streamed, memory) = try renderBothWays(graph, in: dir, slices: [64, 512, 4096])
        XCTAssertGreaterThan(memory[0].map { abs($0) }.max()!, 0.5, "the file plays")
        for c in 0..<2 {
            for (i, s) in streamed.enumerated() {
                XCTAssertTrue(s[c] == memory[c], "streamed (slice \([64, 512, 4096][i])) vs in memory, channel \(c)")
            }
        }
    }
}
