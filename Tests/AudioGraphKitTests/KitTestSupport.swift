// Helpers for the Kit tests: temporary folders, loading inline graphs, rendering and reading files.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

/// Validates inline graph text with paths relative to `directory`; fails the test with the error lines.
func parseGraph(_ text: String, in directory: URL, file: StaticString = #filePath, line: UInt = #line) throws -> ValidatedGraph {
    do {
        return try GraphLoader.parse(text: text, fileName: "graph.json", baseDirectory: directory.path)
    } catch {
        XCTFail("graph does not load:\n\(error.description)", file: file, line: line)
        throw error
    }
}

/// Renders a graph into `directory/name` and returns the file's channels and rate.
@discardableResult
func renderToFile(_ v: ValidatedGraph, _ path: String, frames: Int64? = nil, slice: Int? = nil,
                  sampleType: SampleType? = nil) throws -> (channels: [[Float]], sampleRate: Double) {
    let r = try OfflineRenderer(v, outputPath: path, frames: frames, sampleType: sampleType, sliceSize: slice)
    try r.render(to: path)
    let read = try AudioFileReader.read(path: path)
    return (read.channels, read.info.sampleRate)
}

/// Names of the files in a folder, sorted.
func fileNames(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

extension XCTestCase: TeardownRegistering {}
