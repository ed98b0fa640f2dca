// Tests of OutputNode and LivePlayer: a graph played live to a real daemon equals its offline render.
import AudioGraphKit
import AudioGraphPulse
import AudioGraphTesting
import Foundation
import XCTest

final class LivePlayerTests: PulseServerTestCase {
    private func graphText(output: String, updateFrame: Int, secondFrame: Int? = nil, latency: Int = 100) -> String {
        """
        { "version": 1, "sampleRate": 48000, "maximumFramesPerSlice": 256,
          "nodes": [
            { "id": "osc", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 },
              "properties": { "channels": 2 } },
            { "id": "out", "type": "\(output)" \(output == "output" ? ", \"properties\": { \"latency\": \(latency) }" : "") } ],
          "connections": [ { "from": "osc", "to": "out" } ],
          "updates": [ { "frame": \(updateFrame), "actions": [
            { "setParameter": { "node": "osc", "address": "amplitude", "value": 0.25 } } ] },
            { "frame": \(secondFrame ?? updateFrame), "actions": [
            { "setParameter": { "node": "osc", "address": "frequency", "value": 500 } } ] } ] }
        """
    }

    /// Plays `live` for `frames` frames while recording the null sink's monitor (`drive` polls
    /// the player until the render thread has rendered that many frames), and counts how many
    /// recorded frames equal the offline render `offline`, from its first sound on.
    private func playAndCompare(_ live: ValidatedGraph, with offline: ValidatedGraph, frames: Int,
                                drive: (LivePlayer) throws -> Void) throws -> (matching: Int, rest: Int, summary: LivePlayerSummary) {
        let offlinePath = server.directory.appendingPathComponent("offline.wav").path
        let renderer = try OfflineRenderer(offline, outputPath: offlinePath, frames: Int64(frames) + 24_000, sampleType: .float32)
        try renderer.render(to: offlinePath)
        let expected = try AudioFileReader.read(path: offlinePath).channels
        XCTAssertEqual(expected[0][0], 0)
        XCTAssertNotEqual(expected[0][1], 0)

        let file = server.directory.appendingPathComponent("live.raw")
        let recorder = try server.startRecording(source: server.monitorSourceName, to: file)
        usleep(300_000)
        let player = try LivePlayer(live, server: server.serverString)
        try player.start()
        try drive(player)
        let summary = player.stop()
        usleep(300_000)
        server.stopChild(recorder)

        let samples = try PulseTestServer.readRawFloat32(file)
        let recorded = samples.count / 2
        let first = try XCTUnwrap((0..<recorded).first { samples[2 * $0] != 0 }, "silent recording")
        // recorded[first] is offline frame 1 (frame 0 of a sine at phase 0 is 0).
        var matching = 0
        while first + matching < recorded, matching + 1 < expected[0].count,
              samples[2 * (first + matching)] == expected[0][matching + 1],
              samples[2 * (first + matching) + 1] == expected[1][matching + 1] {
            matching += 1
        }
        let rest = samples[(2 * (first + matching))...].filter { $0 != 0 }.count
        print("live vs offline: \(matching) frames bit-identical (rendered \(summary.renderedFrames)), \(rest) non-zero samples after; "
              + "updates \(summary.appliedUpdates.map { "\($0.scheduled)->\($0.applied)" }); "
              + String(format: "latency %.1f ms (server %.1f + ring %.1f) for %.0f requested; underruns %d; realtime %@",
                       (summary.latency?.total ?? -1) * 1000, (summary.latency?.server ?? -1) * 1000,
                       (summary.latency?.ring ?? -1) * 1000, summary.requestedLatency, summary.underruns,
                       summary.realtime ? "yes" : "no"))
        return (matching, rest, summary)
    }

    /// Plays oscillator → output live for 5 s with updates at frames 24007 and 24010, records the null
    /// sink's monitor, and compares every recorded frame with the offline render of the same graph
    /// whose updates are at 24064 — the first 256-frame slice boundary at or after them, where the
    /// spec says a live update takes effect.
    func testLivePlaybackEqualsOfflineRenderWithUpdateAtSliceBoundary() throws {
        let live = try GraphLoader.parse(text: graphText(output: "output", updateFrame: 24007, secondFrame: 24010))
        let offline = try GraphLoader.parse(text: graphText(output: "genericOutput", updateFrame: 24064))
        let (matching, rest, summary) = try playAndCompare(live, with: offline, frames: 240_000) { player in
            while player.renderedFrames < 240_000 {  // 5 s
                try player.poll()
                usleep(2_000)
            }
        }
        XCTAssertEqual(summary.appliedUpdates.map(\.scheduled), [24007, 24010])
        XCTAssertEqual(summary.appliedUpdates.map(\.applied), [24064, 24064])
        XCTAssertGreaterThan(matching, 230_000, "the live recording departs from the offline render at frame \(matching + 1)")
        XCTAssertEqual(rest, 0)
        XCTAssertEqual(summary.underruns, 0)
        XCTAssertNotNil(summary.latency)
    }

    /// At 40 ms the output renders 64-frame quanta (a quarter of the graph's 256-frame slice):
    /// the recording still equals the offline render (256-frame slices) bit for bit, and updates
    /// at frames 23950 and 23990 — where the render thread is held at the quantum boundary 24000,
    /// before the slice boundary — land at the slice boundary 24064 as offline.
    func testLivePlaybackInSmallQuantaEqualsOfflineRender() throws {
        let live = try GraphLoader.parse(text: graphText(output: "output", updateFrame: 23950, secondFrame: 23990, latency: 40))
        let offline = try GraphLoader.parse(text: graphText(output: "genericOutput", updateFrame: 24064))
        let built = try GraphLoader.build(live)
        let output = try XCTUnwrap(built.outputNode as? OutputNode)
        XCTAssertEqual(output.streamConfiguration(graph: built.graph).playbackQuantumFrames, 64)
        built.graph.uninitialize()
        let (matching, rest, summary) = try playAndCompare(live, with: offline, frames: 144_000) { player in
            while player.renderedFrames < 144_000 {  // 3 s
                try player.poll()
                usleep(2_000)
            }
        }
        XCTAssertEqual(summary.appliedUpdates.map(\.applied), [24064, 24064])
        XCTAssertGreaterThan(matching, 140_000, "the live recording departs from the offline render at frame \(matching + 1)")
        XCTAssertEqual(rest, 0)
        XCTAssertEqual(summary.underruns, 0)
    }

    /// A timed update is published ahead of its time and adopted by the render thread on its
    /// own: the control thread polls until it has published the update at frame 48007 (boundary
    /// 48128), then stops polling for 1.5 s. Audio keeps flowing (the render thread is not held:
    /// no underrun, 1.5 s more rendered) and the change lands exactly at the boundary.
    func testTimedUpdateLandsAtItsBoundaryWithoutAPollingControlThread() throws {
        let live = try GraphLoader.parse(text: graphText(output: "output", updateFrame: 48007))
        let offline = try GraphLoader.parse(text: graphText(output: "genericOutput", updateFrame: 48128))
        var renderedAtPublish = 0
        var renderedAfter = 0
        let (matching, rest, summary) = try playAndCompare(live, with: offline, frames: 144_000) { player in
            while !player.graph.hasPendingPlan {
                try player.poll()
                usleep(1_000)
            }
            renderedAtPublish = player.renderedFrames
            usleep(1_500_000)  // no poll
            renderedAfter = player.renderedFrames
        }
        print("published with \(renderedAtPublish) frames rendered (boundary 48128); 1.5 s later \(renderedAfter)")
        XCTAssertLessThan(renderedAtPublish, 48128, "published before its boundary")
        XCTAssertGreaterThan(renderedAfter, 48128 + 60_000, "the render thread was not held at the update")
        XCTAssertEqual(summary.appliedUpdates.map(\.applied), [48128, 48128])
        XCTAssertGreaterThan(matching, 100_000, "the live recording departs from the offline render at frame \(matching + 1)")
        XCTAssertEqual(rest, 0)
        XCTAssertEqual(summary.underruns, 0)
    }

    /// Commands: `setParameter` changes a parameter at once; `connect`/`disconnect` wait for `update`.
    func testCommandsSetParameterAndQueueConnectionsUntilUpdate() throws {
        let live = try GraphLoader.parse(text: graphText(output: "output", updateFrame: 10_000_000))
        let player = try LivePlayer(live, server: server.serverString)
        try player.start()
        defer { player.stop() }
        try player.apply(.setParameter(node: "osc", address: "amplitude", value: 0.1, rampDuration: 0.01))
        XCTAssertEqual(player.graph.node("osc")?.parameter("amplitude")?.value, 0.1)
        XCTAssertThrowsError(try player.apply(.setParameter(node: "osc", address: "amplitude", value: 7, rampDuration: 0)),
                             "out of range is refused")
        XCTAssertThrowsError(try player.apply(.setParameter(node: "osc", address: "amplitude", value: 0.5, rampDuration: -1)),
                             "a negative ramp is refused")
        XCTAssertThrowsError(try player.apply(.setParameter(node: "nobody", address: "amplitude", value: 1, rampDuration: 0)))
        try player.apply(.disconnect(destination: BusReference(node: "out")))
        XCTAssertEqual(player.graph.connections.count, 1, "queued, not applied")
        try player.apply(.update)
        XCTAssertEqual(player.graph.connections.count, 0)
        try player.apply(.connect(source: BusReference(node: "osc"), destination: BusReference(node: "out")))
        try player.apply(.update)
        XCTAssertEqual(player.graph.connections.count, 1)
        XCTAssertThrowsError(try {
            try player.apply(.connect(source: BusReference(node: "osc"), destination: BusReference(node: "out", bus: 3)))
            try player.apply(.update)
        }(), "a bus out of range is rejected (when queued or at update)")
        XCTAssertEqual(player.graph.connections.count, 1)
        try player.poll()
    }

    func testUnknownSinkAndNoServerArePulseErrors() throws {
        let live = try GraphLoader.parse(text: graphText(output: "output", updateFrame: 100))
        let player = try LivePlayer(live, device: "nope", server: server.serverString)
        XCTAssertThrowsError(try player.start()) { error in
            guard case .pulse(.deviceNotFound("nope"))? = error as? LivePlayerError else { return XCTFail("\(error)") }
        }
        player.stop()
        XCTAssertThrowsError(try LivePlayer(live, server: "unix:/tmp/ag-nothing-here/native")) { error in
            guard case .pulse(.noServer)? = error as? LivePlayerError else { return XCTFail("\(error)") }
        }
    }
}
