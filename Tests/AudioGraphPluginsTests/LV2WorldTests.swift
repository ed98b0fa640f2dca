// Tests of LV2World: the catalogue read through lilv, unknown URIs and refused features.
import Foundation
import XCTest
@testable import AudioGraphPlugins

final class LV2WorldTests: XCTestCase {
    func testAmpIsDescribedAsItsTurtleSays() throws {
        let amp = try LV2World.shared.plugin(uri: SWH.amp)
        XCTAssertEqual(amp.name, "Simple amplifier")
        XCTAssertEqual(amp.ports.map(\.symbol), ["gain", "input", "output"])
        XCTAssertEqual(amp.ports.map(\.kind), [.control, .audio, .audio])
        XCTAssertEqual(amp.ports.map(\.isInput), [true, true, false])
        XCTAssertEqual(amp.ports[0].minimum, -70)
        XCTAssertEqual(amp.ports[0].maximum, 70)
        XCTAssertTrue(amp.runsPerChannel)
        XCTAssertTrue(LV2World.shared.plugins.contains { $0.uri == SWH.amp })
    }

    func testUnknownURIIsNamed() {
        XCTAssertThrowsError(try LV2World.shared.plugin(uri: "urn:nowhere:plugin")) { error in
            XCTAssertEqual(error as? LV2Error, .pluginNotFound(uri: "urn:nowhere:plugin"))
            XCTAssertTrue("\(error)".contains("<urn:nowhere:plugin>"))
        }
    }

    /// A bundle written here declares a plugin (amp's binary) requiring log:log, which the host
    /// does not provide: refused, naming it.
    func testRequiredFeatureIsRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lv2-\(UUID().uuidString)")
        let bundle = dir.appendingPathComponent("needs-log.lv2")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let uri = "urn:audiograph:test:needs-log"
        try """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        <\(uri)> a lv2:Plugin ; lv2:binary </usr/lib/lv2/amp-swh.lv2/plugin-linux.so> ; rdfs:seeAlso <plugin.ttl> .
        """.write(to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        try """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        <\(uri)> a lv2:Plugin ; doap:name "Needs a log" ;
            lv2:requiredFeature <http://lv2plug.in/ns/ext/log#log> ;
            lv2:port [ a lv2:InputPort, lv2:AudioPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In" ] ,
                     [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out" ] .
        """.write(to: bundle.appendingPathComponent("plugin.ttl"), atomically: true, encoding: .utf8)
        let world = LV2World(searchPath: dir.path)
        let info = try world.plugin(uri: uri)
        XCTAssertEqual(info.requiredFeatures, ["http://lv2plug.in/ns/ext/log#log"])
        XCTAssertThrowsError(try LV2Node(id: "x", plugin: info, world: world)) { error in
            XCTAssertEqual(error as? LV2Error, .missingFeature(uri: uri, feature: "http://lv2plug.in/ns/ext/log#log"))
            XCTAssertTrue("\(error)".contains("requires the feature <http://lv2plug.in/ns/ext/log#log>"))
        }
        XCTAssertThrowsError(try world.instantiate(uri: uri, sampleRate: 48000))
    }

    /// Review item 2: whatever a plugin writes into its latency port becomes a frame count
    /// without trapping (the kernel called Int(x.rounded()) on it, which traps on NaN, ∞, 1e30).
    func testReportedLatencyValuesNeverTrap() {
        XCTAssertEqual(LV2World.latencyFrames(reported: 479.6), 480)
        XCTAssertEqual(LV2World.latencyFrames(reported: 0), 0)
        XCTAssertEqual(LV2World.latencyFrames(reported: -12), 0)
        XCTAssertEqual(LV2World.latencyFrames(reported: .nan), 0)
        XCTAssertEqual(LV2World.latencyFrames(reported: -.infinity), 0)
        XCTAssertEqual(LV2World.latencyFrames(reported: .infinity), LV2World.maximumReportedLatency)
        XCTAssertEqual(LV2World.latencyFrames(reported: 1e30), LV2World.maximumReportedLatency)
        XCTAssertEqual(LV2World.latencyFrames(reported: Float(LV2World.maximumReportedLatency) - 1),
                       LV2World.maximumReportedLatency - 1)
    }

    /// Review item 13: swh divider's `denominator` is `lv2:integer` and offset's `automatable`
    /// `lv2:toggled` (their Turtle says so); the host hands them whole numbers and 0/1 however
    /// a ramp passes through them.
    func testIntegerAndToggledControlsGetWholeValues() throws {
        let divider = try LV2World.shared.plugin(uri: "http://plugin.org.uk/swh-plugins/divider")
        let denominator = try XCTUnwrap(divider.controlInputs.first { $0.symbol == "denominator" })
        XCTAssertTrue(denominator.isInteger)
        XCTAssertFalse(denominator.isToggled)
        XCTAssertEqual([1.2, 1.5, 2.49, 7.0].map { denominator.hostValue($0) }, [1, 2, 2, 7])
        let amp = try LV2World.shared.plugin(uri: SWH.amp)
        XCTAssertFalse(amp.controlInputs[0].isInteger)
        XCTAssertEqual(amp.controlInputs[0].hostValue(1.25), 1.25)
        var toggle = denominator
        toggle.isInteger = false
        toggle.isToggled = true
        XCTAssertEqual([0, 0.2, 0.49, 0.5, 0.9, 1].map { toggle.hostValue($0) }, [0, 0, 0, 1, 1, 1])
    }

    /// The scheme test lilv's own check would otherwise report on stderr: RFC 3986 schemes only.
    func testURISchemeCheck() {
        for good in ["http://plugin.org.uk/swh-plugins/amp", "urn:nowhere:plugin", "x-y.z+w:1"] {
            XCTAssertTrue(LV2World.hasURIScheme(good), good)
        }
        for bad in ["", "httpp//:bad uri", ":x", "1http://a", "no scheme", "ht tp://a"] {
            XCTAssertFalse(LV2World.hasURIScheme(bad), bad)
        }
    }
}
