// Helpers for the description tests: load graph text with stated sound-file information.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes
import AudioGraphPulse
import AudioGraphPlugins
import AudioGraphCore
import Foundation

/// Registers every node type of the package (each module's own list), as AudioGraphKit's loader does.
func registerNodeTypes() {
    StockNodeTypes.register()
    PulseNodeTypes.register()
    PluginNodeTypes.register()
}

/// A `fileInfo` for tests: the files a graph names, by resolved path, with what libsndfile would
/// report; any other path fails like a missing file.
struct StubFiles {
    var files: [String: AudioFileInfo]

    struct Missing: Error, CustomStringConvertible {
        var path: String
        var description: String { "no such file" }
    }

    func info(_ path: String) throws -> AudioFileInfo {
        guard let info = files[path] else { throw Missing(path: path) }
        return info
    }
}

/// What `audiograph validate` runs: the file checks, then the engine's graph rules on the real
/// nodes (``GraphChecker/checkEngineRules(_:fileName:)``). The stub files are written as real (silent) WAV files with the stated
/// rate, channels and length in a temporary folder, so a real player node can open them; the
/// file checks still see the stub's information.
func validate(_ text: String, stub: StubFiles) throws(GraphDescriptionErrors) -> ValidatedGraph {
    registerNodeTypes()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ag-desc-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for (name, info) in stub.files where info.sampleRate >= 1 && info.channels >= 1 && info.frames >= 0 && !name.hasPrefix("/") {
        let frames = Int(min(info.frames, 1 << 22))
        let storage = ChannelBufferStorage(channelCount: info.channels, capacity: max(1, frames))
        let path = URL(fileURLWithPath: folder + "/" + name)
        try? FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard let w = try? AudioFileWriter(path: path.path, format: StreamFormat(sampleRate: info.sampleRate, channelCount: info.channels)) else { continue }
        if frames > 0 { try? w.write(storage.list, frameCount: frames) }
        try? w.close()
    }
    let v = try GraphDescription.parse(text: text, fileName: "graph.json", baseDirectory: folder) { path in
        try stub.info(path.hasPrefix(folder + "/") ? String(path.dropFirst(folder.count + 1)) : path)
    }
    return try GraphChecker.checkEngineRules(v, fileName: "graph.json")
}

/// Loads `text` as `graph.json`; fails the test when it is invalid.
func loadGraph(_ text: String, files: [String: AudioFileInfo] = [:], file: StaticString = #filePath,
               line: UInt = #line) throws -> ValidatedGraph {
    let stub = StubFiles(files: files)
    do {
        return try validate(text, stub: stub)
    } catch {
        XCTFail("unexpected errors:\n\(error.description)", file: file, line: line)
        throw error
    }
}

/// The error lines of `text`; fails the test when it loads.
func errorLines(_ text: String, files: [String: AudioFileInfo] = [:], file: StaticString = #filePath,
                line: UInt = #line) -> [String] {
    let stub = StubFiles(files: files)
    do {
        _ = try validate(text, stub: stub)
        XCTFail("expected errors, the graph loaded", file: file, line: line)
        return []
    } catch {
        return error.lines
    }
}

/// A minimal valid graph around `nodes` and `connections` (JSON fragments), with an oscillator
/// `osc` and a generic output `out` already present when `withDefaults` is true.
func graphText(nodes: String, connections: String, extra: String = "") -> String {
    """
    { "version": 1, "sampleRate": 48000, "nodes": [ \(nodes) ], "connections": [ \(connections) ]\(extra.isEmpty ? "" : ", " + extra) }
    """
}
