// Tests of `audiograph plugins` and of what `inspect`/`render` say about lv2 nodes.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

extension CommandLineTests {
    /// amp as Debian's /usr/lib/lv2/amp-swh.lv2/plugin.ttl declares it: three ports, gain -70...70 default 0.
    func testPluginsListsAmpWithItsPorts() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let r = try run(["plugins", "http://plugin.org.uk/swh-plugins/amp"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, """
            http://plugin.org.uk/swh-plugins/amp  "Simple amplifier"
              port 0 gain: control input, range -70...70, default 0 "Amps gain (dB)"
              port 1 input: audio input "Input"
              port 2 output: audio output "Output"

            """)
        let all = try run(["plugins"], in: dir)
        XCTAssertEqual(all.status, 0)
        let uris = all.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }
        XCTAssertTrue(uris.contains { $0.hasPrefix("http://plugin.org.uk/swh-plugins/matrixStMS ") })
        // One entry per plugin the swh bundles' manifests declare (`<uri> a lv2:Plugin`).
        let bundles = try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/lv2").filter { $0.hasSuffix("-swh.lv2") }
        var declared = 0
        for bundle in bundles {
            let manifest = try String(contentsOfFile: "/usr/lib/lv2/\(bundle)/manifest.ttl", encoding: .utf8)
            declared += manifest.components(separatedBy: " a lv2:Plugin").count - 1
                + manifest.components(separatedBy: " a :Plugin").count - 1
        }
        XCTAssertGreaterThan(declared, 90)
        XCTAssertEqual(uris.filter { $0.hasPrefix("http://plugin.org.uk/swh-plugins/") }.count, declared)
    }

    func testPluginsWithAnUnknownURIIsOneLineAndExitOne() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let r = try run(["plugins", "urn:no:such:plugin"], in: dir)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("<urn:no:such:plugin>"), r.stderr)
    }

    /// inspect shows the lv2 node's ports and the latency artificialLatency reports (10 ms at 48 kHz).
    func testInspectShowsPortsAndLatency() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "osc", "type": "oscillator" },
                         { "id": "lat", "type": "lv2", "properties": { "plugin": "http://plugin.org.uk/swh-plugins/artificialLatency" },
                           "parameters": { "delay": 10 } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "lat" }, { "from": "lat", "to": "out" } ] }
            """, "lat.json", in: dir)
        let r = try run(["inspect", "lat.json"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("      port 3 latency: control output (reports latency) \"latency\"\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("    latency: 480 frames\n"), r.stdout)
    }

    func testRenderWithAnUnknownPluginIsOneLineAndWritesNothing() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "osc", "type": "oscillator" },
                         { "id": "fx", "type": "lv2", "properties": { "plugin": "urn:no:such:plugin" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """, "bad.json", in: dir)
        let r = try run(["render", "bad.json", "-o", "bad.wav"], in: dir)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("bad.json: nodes[1] (id \"fx\").properties.plugin"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad.wav").path))

        // A "URI" without a scheme (a fuzzer's find): lilv would print a line of its own; still one.
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "osc", "type": "oscillator" },
                         { "id": "fx", "type": "lv2", "properties": { "plugin": "httpp//:bad uri" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """, "schemeless.json", in: dir)
        let v = try run(["validate", "schemeless.json"], in: dir)
        XCTAssertEqual(v.status, 1)
        XCTAssertEqual(v.stderrLines.count, 1, v.stderr)
        XCTAssertTrue(v.stderr.contains("schemeless.json: nodes[1] (id \"fx\").properties.plugin"), v.stderr)
    }

    /// A plugin node fed NaN and infinity (a float WAV through a player) gets silence instead and
    /// says so after the render, one warning line naming the graph, the node and the plugin:
    /// 3 NaN and 2 infinite samples in each of the two channels (amp is mono: a plugin instance per
    /// channel), 10 samples. The renderer finds the reporting node through
    /// `GraphNode.renderFaultReporter` (no run-time protocol cast); the line disappeared when LV2Node
    /// did not register itself there.
    func testABadSampleReachingAPluginIsOneWarningAfterTheRender() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        var samples = (0..<4800).map { sin(2 * Double.pi * 440 * Double($0) / 48_000) * 0.5 }
        for n in [100, 200, 300] { samples[n] = .nan }
        samples[400] = .infinity
        samples[500] = -.infinity
        try WAVFile(sampleRate: 48_000, sampleType: .float32, channels: [samples, samples]).write(to: dir.appendingPathComponent("bad.wav"))
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "p", "type": "player", "properties": { "file": "bad.wav" } },
                         { "id": "amp", "type": "lv2", "properties": { "plugin": "http://plugin.org.uk/swh-plugins/amp" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "p", "to": "amp" }, { "from": "amp", "to": "out" } ] }
            """, "bad.json", in: dir)
        let r = try run(["render", "bad.json", "-o", "out.wav", "--quiet"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderrLines.filter { $0.hasPrefix("warning: bad.json: node \"amp\": ") },
                       ["warning: bad.json: node \"amp\": plugin http://plugin.org.uk/swh-plugins/amp: 10 non-finite input samples replaced by silence"],
                       r.stderr)
        let out = try WAVFile(contentsOf: dir.appendingPathComponent("out.wav"))
        XCTAssertTrue(out.samples.allSatisfy { $0.allSatisfy { $0.isFinite } }, "nothing non-finite leaves the node")
    }

    /// A plugin without lv2:hardRTCapable (a bundle written here and alone on LV2_PATH: swh amp's
    /// URI and binary, described without the property) is flagged by `plugins` and `inspect`, and
    /// `render` runs it with one warning line.
    func testNotHardRTCapableIsFlaggedAndRunsWithAWarning() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let bundle = dir.appendingPathComponent("lv2/soft-amp.lv2")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let uri = "http://plugin.org.uk/swh-plugins/amp"
        try """
            @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
            @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
            <\(uri)> a lv2:Plugin ; lv2:binary </usr/lib/lv2/amp-swh.lv2/plugin-linux.so> ; rdfs:seeAlso <plugin.ttl> .
            """.write(to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        try """
            @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
            @prefix doap: <http://usefulinc.com/ns/doap#> .
            <\(uri)> a lv2:Plugin ; doap:name "Soft amp" ;
                lv2:port [ a lv2:InputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "input" ; lv2:name "In" ] ,
                         [ a lv2:InputPort, lv2:ControlPort ; lv2:index 0 ; lv2:symbol "gain" ; lv2:name "Gain" ; lv2:default 0 ] ,
                         [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 2 ; lv2:symbol "output" ; lv2:name "Out" ] .
            """.write(to: bundle.appendingPathComponent("plugin.ttl"), atomically: true, encoding: .utf8)
        let env = ["LV2_PATH": dir.appendingPathComponent("lv2").path]
        let listed = try run(["plugins", uri], in: dir, environment: env)
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.stdout.hasPrefix("\(uri)  \"Soft amp\"  (not hardRTCapable: runs with a warning)\n"), listed.stdout)
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "osc", "type": "oscillator" },
                         { "id": "soft", "type": "lv2", "properties": { "plugin": "\(uri)" } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "soft" }, { "from": "soft", "to": "out" } ] }
            """, "soft.json", in: dir)
        let inspected = try run(["inspect", "soft.json"], in: dir, environment: env)
        XCTAssertEqual(inspected.status, 0, inspected.stderr)
        XCTAssertTrue(inspected.stdout.contains("    plugin \(uri) \"Soft amp\"  (not hardRTCapable: runs with a warning)\n"), inspected.stdout)
        let rendered = try run(["render", "soft.json", "-o", "soft.wav"], in: dir, environment: env)
        let warnings = rendered.stderrLines.filter { $0.hasPrefix("warning: node \"soft\": LV2 plugin <\(uri)> is not hardRTCapable") }
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        XCTAssertEqual(warnings.count, 1, rendered.stderr)
    }
}
