// Tests of the features plugins receive, through a C plugin that maps URIs and reads its options.
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphPlugins

final class LV2InstanceFeaturesTests: XCTestCase {
    private var probe: LV2ProbePlugin!
    private var world: LV2World!

    override func setUpWithError() throws {
        probe = try LV2ProbePlugin.build()
        world = try LV2World(searchPath: probe.path.path)
    }

    override func tearDown() { probe?.remove() }

    /// The plugin requiring urid:map, unmap, options and boundedBlockLength (with required atom
    /// ports) is now a node; in a graph of 44.1 kHz and 128-frame slices it saw exactly those
    /// options, a working map, an empty input sequence and an output with 8184 bytes of room.
    /// No nominalBlockLength (review item 12: live runs are small quanta, offline runs whole
    /// slices and ramps sub-blocks, so there is no typical length to promise): the probe reads 0.
    func testProbeSeesMapOptionsAndAtomBuffers() throws {
        let info = try world.plugin(uri: LV2ProbePlugin.uri)
        XCTAssertEqual(Set(info.requiredFeatures), [LV2URI.uridMap, LV2URI.uridUnmap, LV2URI.options, LV2URI.boundedBlockLength])
        XCTAssertFalse(info.isHardRTCapable)
        let node = try LV2Node(id: "probe", plugin: info, world: world)
        // The probe writes numbers (44100, 8184), not audio: above the default runaway limit.
        node.outputLimit = .greatestFiniteMagnitude
        let src = formulaSource("src", channels: 1) { _, _ in 0 }
        let g = try startedChain([src, node], ["src", "probe"], sampleRate: 44100, slice: 128)
        let y = renderFrames(g, frames: 256, channels: 1)[0]
        let expected: [Float] = [128, 1, 0, 44100, 1, 1, Float(8192 - 8), 128]
        for k in 0..<256 { XCTAssertEqual(y[k], expected[k % 8], "frame \(k)") }
    }

    /// The host's table: URIDs from 1, stable, unmapped back; 0 and unknown ids unmap to nil;
    /// the plugin's private URI is in the world's table after instantiate (it called map).
    func testURIDMapIsStableAndShared() throws {
        let map = LV2URIDMap()
        let a = map.map("urn:a"), b = map.map("urn:b")
        XCTAssertEqual([a, b, map.map("urn:a")], [1, 2, 1])
        XCTAssertEqual(map.unmap(b), "urn:b")
        XCTAssertNil(map.unmap(0))
        XCTAssertNil(map.unmap(3))
        _ = try world.instantiate(uri: LV2ProbePlugin.uri, sampleRate: 48000, maximumFrames: 64)
        let id = world.uridMap.map("urn:audiograph:test:probe#private")
        XCTAssertEqual(world.uridMap.unmap(id), "urn:audiograph:test:probe#private")
        XCTAssertLessThan(id, world.uridMap.map("urn:audiograph:test:never-mapped-before"))
    }

    /// A plugin that also requires log:log is still refused, naming that feature.
    func testUnprovidedFeatureIsStillRefused() throws {
        let info = try world.plugin(uri: LV2ProbePlugin.logURI)
        let log = "http://lv2plug.in/ns/ext/log#log"
        XCTAssertThrowsError(try LV2Node(id: "l", plugin: info, world: world)) { error in
            XCTAssertEqual(error as? LV2Error, .missingFeature(uri: LV2ProbePlugin.logURI, feature: log))
        }
        XCTAssertThrowsError(try world.instantiate(uri: LV2ProbePlugin.logURI, sampleRate: 48000))
        XCTAssertTrue(info.listing.contains("requires <\(log)> (not provided"), info.listing)
    }

    /// worker:schedule: the plugin's first run schedules 21; the worker thread (not the render
    /// thread) answers 42, which reaches work_response on a later run; end_run is called.
    func testWorkerDoesScheduledWorkOnItsOwnThread() throws {
        let info = try world.plugin(uri: LV2ProbePlugin.workerURI)
        let node = try LV2Node(id: "w", plugin: info, world: world)
        let src = formulaSource("src", channels: 1) { _, _ in 0 }
        let g = try startedChain([src, node], ["src", "w"], slice: 64)
        var y = renderFrames(g, frames: 64, channels: 1)[0]
        XCTAssertEqual(y[3], 0, "schedule_work returned LV2_WORKER_SUCCESS")
        XCTAssertEqual(y[0], 0, "no response within the run that scheduled the work")
        for _ in 0..<200 where y[0] != 42 {
            usleep(5000)
            y = renderFrames(g, frames: 64, channels: 1)[0]
        }
        // response 42, work ran off the render thread, end_run was called, schedule succeeded.
        XCTAssertEqual(Array(y[0..<4]), [42, 1, 1, 0])
    }

    /// A node of a plugin without lv2:hardRTCapable writes one warning line to stderr; swh amp
    /// (which declares it) writes none. The listing flags the probe.
    func testNotHardRTCapableWarnsOnStderr() throws {
        let info = try world.plugin(uri: LV2ProbePlugin.uri)
        let captured = try captureStderr { _ = try LV2Node(id: "p", plugin: info, world: world) }
        XCTAssertEqual(captured, LV2Node.hardRTWarning(id: "p", plugin: info) + "\n")
        XCTAssertTrue(captured.hasPrefix("warning: node \"p\": LV2 plugin <urn:audiograph:test:probe> is not hardRTCapable"))
        XCTAssertEqual(try captureStderr { _ = try LV2Node(id: "a", uri: SWH.amp) }, "")
        XCTAssertTrue(info.listing.contains("(not hardRTCapable"))
        XCTAssertFalse(try LV2World.shared().plugin(uri: SWH.amp).listing.contains("hardRT"))
    }

    private func captureStderr(_ body: () throws -> Void) throws -> String {
        let file = probe.root.appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let fd = open(file.path, O_WRONLY)
        let saved = dup(2)
        dup2(fd, 2)
        defer {
            dup2(saved, 2)
            close(saved)
            close(fd)
        }
        try body()
        return try String(contentsOf: file, encoding: .utf8)
    }
}
