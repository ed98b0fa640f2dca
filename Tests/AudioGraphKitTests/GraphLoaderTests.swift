// Tests of GraphLoader: files load with paths relative to the graph's folder; problems name the file.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class GraphLoaderTests: XCTestCase {
    func testRelativePathsResolveAgainstTheGraphsFolder() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let sounds = dir.appendingPathComponent("sounds")
        try FileManager.default.createDirectory(at: sounds, withIntermediateDirectories: true)
        try TestFiles.writeSoundFile(sounds.appendingPathComponent("x.wav").path, [[Float](repeating: 0.5, count: 2205)], sampleRate: 22050)
        let graphPath = dir.appendingPathComponent("g.json").path
        try Data("""
            { "version": 1, "nodes": [ { "id": "p", "type": "player", "properties": { "file": "sounds/x.wav", "startTime": 1 } },
                                       { "id": "mix", "type": "mixer" }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "p", "to": "mix" }, { "from": "mix", "to": "out" } ] }
            """.utf8).write(to: URL(fileURLWithPath: graphPath))
        let v = try GraphLoader.load(graphPath)
        guard let p = v.description.nodes[0].configuration.options(as: PlayerProperties.self) else { return XCTFail() }
        XCTAssertEqual(p.file, "sounds/x.wav")
        XCTAssertEqual(URL(fileURLWithPath: p.path).standardizedFileURL.path, sounds.appendingPathComponent("x.wav").standardizedFileURL.path)
        XCTAssertEqual(v.audioFiles[p.path], AudioFileInfo(sampleRate: 22050, channels: 1, frames: 2205))
        XCTAssertEqual(v.defaultRenderDuration, 1.1, accuracy: 1e-12, "the player's start plus its length")
        XCTAssertEqual(try GraphLoader.probe(p.path).frames, 2205)
    }

    func testProblemsNameTheFileAndPlace() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let graphPath = dir.appendingPathComponent("broken.json").path
        try Data("""
            { "version": 1, "nodes": [ { "id": "p", "type": "player", "properties": { "file": "missing.wav" } },
                                       { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "p", "to": "out" } ], "extra": 1 }
            """.utf8).write(to: URL(fileURLWithPath: graphPath))
        XCTAssertThrowsError(try GraphLoader.load(graphPath)) { error in
            let lines = (error as? GraphDescriptionErrors)?.lines ?? []
            XCTAssertEqual(lines.count, 2, "\(lines)")
            XCTAssertTrue(lines.allSatisfy { $0.hasPrefix(graphPath) }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.contains("extra") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.contains("nodes[0]") && $0.contains("missing.wav") }, "\(lines)")
        }
        XCTAssertThrowsError(try GraphLoader.load(dir.appendingPathComponent("nope.json").path)) {
            XCTAssertTrue("\($0)".contains("nope.json"))
        }
        XCTAssertThrowsError(try GraphLoader.parse(text: "{", fileName: "inline.json")) {
            XCTAssertTrue("\($0)".hasPrefix("inline.json"), "\($0)")
        }
    }

    func testFixtureGraphFromTheTestBundle() throws {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "tone-updates", withExtension: "json", subdirectory: "Fixtures"))
        let v = try GraphLoader.load(url.path)
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let y = try renderToFile(v, dir.appendingPathComponent("t.wav").path).channels
        XCTAssertEqual(y[0].count, 2400)
        // Hard left (pan -1: left gain 1, right 0), then hard right from frame 1000.
        let s = { (n: Int) in 0.5 * sin(2 * Double.pi * 750 * Double(n) / 48000) }
        XCTAssertLessThan(SignalMeasurement.worstError(y[0]) { $0 < 1000 ? s($0) : 0 }.error, 1e-6)
        XCTAssertLessThan(SignalMeasurement.worstError(y[1]) { $0 < 1000 ? 0 : s($0) }.error, 1e-6)
    }
}
