// Tests of LV2World: the catalogue read through lilv, unknown URIs and refused features.
import Foundation
import XCTest
@testable import AudioGraphPlugins

final class LV2WorldTests: XCTestCase {
    func testAmpIsDescribedAsItsTurtleSays() throws {
        let amp = try LV2World.shared().plugin(uri: SWH.amp)
        XCTAssertEqual(amp.name, "Simple amplifier")
        XCTAssertEqual(amp.ports.map(\.symbol), ["gain", "input", "output"])
        XCTAssertEqual(amp.ports.map(\.kind), [.control, .audio, .audio])
        XCTAssertEqual(amp.ports.map(\.isInput), [true, true, false])
        XCTAssertEqual(amp.ports[0].minimum, -70)
        XCTAssertEqual(amp.ports[0].maximum, 70)
        XCTAssertTrue(amp.runsPerChannel)
        XCTAssertTrue(try LV2World.shared().plugins.contains { $0.uri == SWH.amp })
    }

    func testUnknownURIIsNamed() {
        XCTAssertThrowsError(try LV2World.shared().plugin(uri: "urn:nowhere:plugin")) { error in
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
        let world = try LV2World(searchPath: dir.path)
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
        let divider = try LV2World.shared().plugin(uri: "http://plugin.org.uk/swh-plugins/divider")
        let denominator = try XCTUnwrap(divider.controlInputs.first { $0.symbol == "denominator" })
        XCTAssertTrue(denominator.isInteger)
        XCTAssertFalse(denominator.isToggled)
        XCTAssertEqual([1.2, 1.5, 2.49, 7.0].map { denominator.hostValue($0) }, [1, 2, 2, 7])
        let amp = try LV2World.shared().plugin(uri: SWH.amp)
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

    /// A URI with an embedded NUL was looked up as the part before it (lilv takes C strings):
    /// "…/amp\0junk" found amp. Now it names no plugin, and the message shows the NUL escaped.
    func testURIWithAnEmbeddedNULNamesNoPlugin() {
        XCTAssertThrowsError(try LV2World.shared().plugin(uri: SWH.amp + "\u{0}junk")) { error in
            XCTAssertEqual(error as? LV2Error, .pluginNotFound(uri: SWH.amp + "\u{0}junk"))
            XCTAssertTrue("\(error)".contains("amp\\u{0}junk"), "\(error)")
        }
        XCTAssertNoThrow(try LV2World.shared().plugin(uri: SWH.amp))
    }

    // MARK: lilv's own lines (issue 22)

    /// A bundle whose manifest lilv cannot parse, and a plugin whose binary is not a library:
    /// lilv's lines (serd's parse errors, "Failed to open library") went to standard error
    /// before ours. Now loading captures them into one line (``LV2World/loadReport``), and the
    /// plugin is refused when its node is made — what `validate` does too — naming the loader's
    /// reason, with nothing printed.
    func testLilvLinesAreCapturedAndABrokenBinaryIsRefusedAtNodeCreation() throws {
        let probe = try LV2ProbePlugin.build()
        defer { probe.remove() }
        let broken = probe.path.appendingPathComponent("broken.lv2")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n<urn:broken> a lv2:Plugin ; lv2:binary <broken.so> ;;; garbage {\n"
            .write(to: broken.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        // A copy of the probe's bundle whose binary is text.
        let fake = probe.path.appendingPathComponent("fake.lv2")
        try FileManager.default.createDirectory(at: fake, withIntermediateDirectories: true)
        let original = probe.path.appendingPathComponent("probe.lv2")
        for name in ["manifest.ttl", "probe.ttl"] {
            let text = try String(contentsOf: original.appendingPathComponent(name), encoding: .utf8)
                .replacingOccurrences(of: "urn:audiograph:test:", with: "urn:audiograph:fake:")
            try text.write(to: fake.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try "not a library".write(to: fake.appendingPathComponent("probe.so"), atomically: true, encoding: .utf8)

        let (world, printed) = try capturingStandardError { try LV2World(searchPath: probe.path.path) }
        XCTAssertEqual(printed, "", "lilv printed nothing itself")
        let report = try XCTUnwrap(world.loadReport)
        XCTAssertTrue(report.hasPrefix("lilv while loading the LV2 path: "), report)
        XCTAssertFalse(report.contains("\n"))
        let uri = LV2ProbePlugin.uri.replacingOccurrences(of: "urn:audiograph:test:", with: "urn:audiograph:fake:")
        let info = try world.plugin(uri: uri)
        let (made, printedByNode) = try capturingStandardError { Result { () throws(LV2Error) in try LV2Node(id: "fx", plugin: info, world: world) } }
        XCTAssertEqual(printedByNode, "")
        XCTAssertThrowsError(try made.get()) { error in
            guard case .binaryNotLoadable(let u, let reason) = error as? LV2Error else { return XCTFail("\(error)") }
            XCTAssertEqual(u, uri)
            XCTAssertTrue(reason.contains("probe.so"), reason)
        }
        // The real probe still loads.
        XCTAssertNoThrow(try LV2Node(id: "ok", plugin: try world.plugin(uri: LV2ProbePlugin.uri), world: world))
    }

    /// Runs `body` with this process's standard error redirected to a file; returns what it printed.
    private func capturingStandardError<T>(_ body: () throws -> T) throws -> (T, String) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(getpid())-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: url) }
        let handle = try FileHandle(forWritingTo: url)
        fflush(nil)
        let saved = dup(2)
        dup2(handle.fileDescriptor, 2)
        let result = Result { try body() }
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        try handle.close()
        return (try result.get(), try String(contentsOf: url, encoding: .utf8))
    }
}
