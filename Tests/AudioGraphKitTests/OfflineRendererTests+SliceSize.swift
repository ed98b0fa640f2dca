// Tests of OfflineRenderer's default slice size: large (smaller for a short render), never below the file's, capped by the memory budget.
@testable import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

final class OfflineRendererSliceSizeTests: XCTestCase {
    /// `count` mono oscillators into one genericOutput (only the first is connected).
    private func oscillators(_ count: Int, slice: Int) -> String {
        let nodes = (0..<count).map { #"{ "id": "o\#($0)", "type": "oscillator" }"# }.joined(separator: ", ")
        return """
            { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": \(slice), "duration": 0.01,
              "nodes": [ \(nodes), { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "o0", "to": "out" } ] }
            """
    }

    func testASmallGraphRendersIn4096FrameSlices() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(oscillators(2, slice: 512), in: dir)
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: v), 4096)
        let r = try OfflineRenderer(v, outputPath: dir.appendingPathComponent("a.wav").path, duration: 2)
        XCTAssertEqual(r.built.graph.maximumFramesPerSlice, 4096, "2 s: 96 000 frames")
        let given = try OfflineRenderer(v, outputPath: dir.appendingPathComponent("b.wav").path, sliceSize: 37)
        XCTAssertEqual(given.built.graph.maximumFramesPerSlice, 37, "an explicit slice size wins")
    }

    /// A render shorter than 65 536 frames takes 1024-frame slices (its buffers' first-touch
    /// page faults cost more than the extra slices), never fewer than the file's; the length
    /// comes from `duration`, `frames` or the file's own duration.
    func testAShortRenderTakes1024FrameSlices() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(oscillators(2, slice: 512), in: dir)
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: v, frames: 65_535), 1024)
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: v, frames: 65_536), 4096)
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: v, frames: nil), 4096, "length unknown")
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: try parseGraph(oscillators(1, slice: 2048), in: dir), frames: 100), 2048,
                       "never below the file's value")
        func slice(duration: Double? = nil, frames: Int64? = nil) throws -> Int {
            try OfflineRenderer(v, outputPath: dir.appendingPathComponent("s.wav").path, duration: duration, frames: frames)
                .built.graph.maximumFramesPerSlice
        }
        XCTAssertEqual(try slice(), 1024, "the file's 0.01 s")
        XCTAssertEqual(try slice(duration: 1.36), 1024, "65 280 frames")
        XCTAssertEqual(try slice(duration: 1.37), 4096, "65 760 frames")
        XCTAssertEqual(try slice(frames: 65_535), 1024)
        XCTAssertEqual(try slice(frames: 65_536), 4096)
    }

    func testAFileAskingForMoreKeepsItsSliceSize() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: try parseGraph(oscillators(1, slice: 8192), in: dir)), 8192)
    }

    /// 4200 mono buses × 4096 frames × 4 bytes = 68.8 MB, over the 64 MiB budget: the slice
    /// halves to 2048 (34.4 MB) instead of the graph being refused or taking the memory.
    func testAGraphWithManyBusesGetsASmallerSlice() throws {
        try XCTSkipIf(OfflineRenderer.sliceBufferBudget != 64 << 20, "a machine with less than 2 GiB of memory")
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let v = try parseGraph(oscillators(4200, slice: 512), in: dir)
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: v), 2048)
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: try parseGraph(oscillators(4000, slice: 512), in: dir)), 4096,
                       "4000 × 4096 × 4 = 65.5 MB fits")
        XCTAssertEqual(OfflineRenderer.defaultSliceSize(for: try parseGraph(oscillators(4200, slice: 3000), in: dir)), 3000,
                       "never below the file's value")
    }
}
