// Helpers for the description tests: load graph text with stated sound-file information.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

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
/// nodes (``GraphRules``) unless the graph has a player (its stub file does not exist for the
/// real node to open; GraphRulesTests covers players through real files).
func validate(_ text: String, stub: StubFiles) throws(GraphDescriptionErrors) -> ValidatedGraph {
    let v = try GraphDescription.parse(text: text, fileName: "graph.json", baseDirectory: ".", fileInfo: stub.info)
    var types = v.description.nodes.map(\.type)
    for update in v.description.updates {
        for case .addNode(let n) in update.actions { types.append(n.type) }
    }
    return types.contains(.player) ? v : try GraphRules.check(v, fileName: "graph.json")
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
