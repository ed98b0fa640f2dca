// Helpers for the Kit tests: temporary folders, loading inline graphs, rendering and reading files.
import AudioGraphKit
import Foundation
import XCTest

/// A fresh temporary folder, removed at the end of the test.
func makeTemporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ag-kit-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

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

/// Writes one channel per array to a float32 WAV.
func writeWAV(_ path: String, _ channels: [[Float]], sampleRate: Double) throws {
    let frames = channels[0].count
    let storage = ChannelBufferStorage(channelCount: channels.count, capacity: frames)
    for (c, ch) in channels.enumerated() { for i in 0..<frames { storage.list.channel(c)[i] = ch[i] } }
    let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: sampleRate, channelCount: channels.count))
    try w.write(storage.list, frameCount: frames)
    try w.close()
}

/// Largest |got[n] - expected(n)| and where.
func worstError(_ got: [Float], _ expected: (Int) -> Double) -> (error: Double, at: Int) {
    var worst = 0.0, at = 0
    for n in got.indices {
        let e = abs(Double(got[n]) - expected(n))
        if e > worst { worst = e; at = n }
    }
    return (worst, at)
}

/// Names of the files in a folder, sorted.
func fileNames(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}
