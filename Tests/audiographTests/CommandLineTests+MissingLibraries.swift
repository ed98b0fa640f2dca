// The CLI when a C library it opens on first use cannot be loaded (the loader's test hook hides it): one line naming the library, exit 1 or 3, never an abort.
import AudioGraphTesting
import Foundation
import XCTest

extension CommandLineTests {
    /// What the loader says of a soname its test hook ($AG_LAZY_LIBRARY_MISSING) hides.
    func hiddenLibrary(_ soname: String) -> String { "\(soname): cannot open shared object file (AG_LAZY_LIBRARY_MISSING)" }

    func graph(_ node: String, in dir: URL) throws -> String {
        try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "osc", "type": "oscillator" }, \(node), { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "osc", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """, "g.json", in: dir)
    }

    /// A graph file whose node needs a missing library: `render`, `validate`, `inspect` and
    /// `play` say so in one line at the node's place and exit 1, writing nothing (the process
    /// used to end in the trampoline's abort at the node's first call into the library).
    func testAGraphWhoseNodeNeedsAMissingLibraryIsOneLineAndExitOne() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try WAVFile(sampleRate: 48000, channels: [[1, 0.5, 0.25]]).write(to: dir.appendingPathComponent("ir.wav"))
        let cases: [(node: String, soname: String, library: String)] = [
            (#"{ "id": "fx", "type": "timePitch", "parameters": { "pitch": 700 } }"#, "librubberband.so.2", "librubberband"),
            (#"{ "id": "fx", "type": "convolver", "properties": { "file": "ir.wav" } }"#, "libfftw3f.so.3", "libfftw3f"),
            (#"{ "id": "fx", "type": "analyser" }"#, "libfftw3f.so.3", "libfftw3f"),
            (#"{ "id": "fx", "type": "lv2", "properties": { "plugin": "http://plugin.org.uk/swh-plugins/amp" } }"#,
             "liblilv-0.so.0", "liblilv"),
        ]
        for c in cases {
            _ = try graph(c.node, in: dir)
            for command in [["render", "g.json", "-o", "o.wav"], ["validate", "g.json"], ["inspect", "g.json"], ["play", "g.json"]] {
                let r = try run(command, in: dir, environment: ["AG_LAZY_LIBRARY_MISSING": c.soname])
                XCTAssertEqual(r.status, 1, "\(c.library) \(command): \(r.stderr)")
                XCTAssertEqual(r.stdout, "", "\(c.library) \(command)")
                XCTAssertEqual(r.stderrLines.count, 1, "\(c.library) \(command): \(r.stderr)")
                XCTAssertTrue(r.stderr.hasPrefix("g.json: nodes[1] (id \"fx\")"), "\(c.library) \(command): \(r.stderr)")
                XCTAssertTrue(r.stderr.contains("cannot load \(c.library)"), "\(c.library) \(command): \(r.stderr)")
                XCTAssertTrue(r.stderr.hasSuffix(hiddenLibrary(c.soname) + "\n"), "\(c.library) \(command): \(r.stderr)")
            }
            XCTAssertEqual(fileNames(dir), ["g.json", "ir.wav"], "\(c.library): nothing written")
            let r = try run(["render", "g.json", "-o", "o.wav"], in: dir)
            XCTAssertEqual(r.status, 0, "\(c.library) present: \(r.stderr)")
            try FileManager.default.removeItem(at: dir.appendingPathComponent("o.wav"))
        }
    }

    /// The timePitch case's exact line, as the brief's example of the format.
    func testAMissingRubberBandNamesTheFileTheNodeAndTheLibrary() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try graph(#"{ "id": "fx", "type": "timePitch" }"#, in: dir)
        let r = try run(["render", "g.json", "-o", "o.wav"], in: dir, environment: ["AG_LAZY_LIBRARY_MISSING": "librubberband.so.2"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "g.json: nodes[1] (id \"fx\"): node \"fx\": cannot load librubberband: \(hiddenLibrary("librubberband.so.2"))\n")
    }

    /// `plugins` without liblilv, and a spectrum plot without FFTW: one line, runtime failure (3).
    func testPluginsAndPlotsWithoutTheirLibraryAreOneLineAndExitThree() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let plugins = try run(["plugins"], in: dir, environment: ["AG_LAZY_LIBRARY_MISSING": "liblilv-0.so.0"])
        XCTAssertEqual(plugins.status, 3, plugins.stderr)
        XCTAssertEqual(plugins.stdout, "")
        XCTAssertEqual(plugins.stderr, "audiograph: cannot load liblilv, so LV2 plugins cannot be used: \(hiddenLibrary("liblilv-0.so.0"))\n")

        try TestFiles.writeSoundFile(dir.appendingPathComponent("s.wav").path, [[Float](repeating: 0.5, count: 4800)], sampleRate: 48000)
        for (kind, soname, library) in [("spectrum", "libfftw3f.so.3", "libfftw3f"), ("spectrogram", "libfftw3f.so.3", "libfftw3f"),
                                        ("waveform", "libcairo.so.2", "cairo")] {
            let r = try run(["plot", "s.wav", "-o", "s.png", "--kind", kind], in: dir, environment: ["AG_LAZY_LIBRARY_MISSING": soname])
            XCTAssertEqual(r.status, 3, "\(kind): \(r.stderr)")
            XCTAssertEqual(r.stderr, "cannot load \(library): \(hiddenLibrary(soname))\n", kind)
            XCTAssertEqual(fileNames(dir), ["s.wav"], "\(kind): no picture")
        }
    }

    /// Live commands without libpulse: its own one line (not "no PulseAudio server"), exit 3.
    func testLiveCommandsWithoutLibpulseAreOneLineAndExitThree() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(sine.replacingOccurrences(of: "genericOutput", with: "output"), "g.json", in: dir)
        for command in [["play", "g.json"], ["devices"]] {
            let r = try run(command, in: dir, timeout: 60, environment: ["AG_LAZY_LIBRARY_MISSING": "libpulse.so.0"])
            XCTAssertEqual(r.status, 3, "\(command): \(r.stderr)")
            XCTAssertEqual(r.stderr, "audiograph: cannot load libpulse: \(hiddenLibrary("libpulse.so.0"))\n", "\(command)")
        }
    }
}

extension CommandLineTests {
    /// A rate conversion without its library (a 44.1 kHz file into a 48 kHz mixer: libsoxr), and
    /// `meter` without libebur128: one line naming the library, never an abort; the render
    /// exits 1 at the connection's place, `meter` 3 (a runtime failure, the file is fine).
    func testARateConversionAndAMeterWithoutTheirLibraryAreOneLine() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try WAVFile(sampleRate: 44100, channels: [[0.5, 0.25, 0, -0.25]]).write(to: dir.appendingPathComponent("in.wav"))
        _ = try write("""
            { "version": 1, "sampleRate": 48000, "duration": 0.1,
              "nodes": [ { "id": "p", "type": "player", "properties": { "file": "in.wav" } },
                         { "id": "mix", "type": "mixer" }, { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "p", "to": "mix" }, { "from": "mix", "to": "out" } ] }
            """, "g.json", in: dir)
        let hidden = try run(["render", "g.json", "-o", "o.wav"], in: dir, environment: ["AG_LAZY_LIBRARY_MISSING": "libsoxr.so.0"])
        XCTAssertEqual(hidden.status, 1, hidden.stderr)
        XCTAssertEqual(hidden.stderrLines.count, 1, hidden.stderr)
        XCTAssertTrue(hidden.stderr.hasPrefix("g.json"), hidden.stderr)
        XCTAssertTrue(hidden.stderr.hasSuffix("cannot load libsoxr: \(hiddenLibrary("libsoxr.so.0"))\n"), hidden.stderr)
        XCTAssertEqual(fileNames(dir), ["g.json", "in.wav"], "nothing written")
        let present = try run(["render", "g.json", "-o", "o.wav"], in: dir)
        XCTAssertEqual(present.status, 0, present.stderr)

        let meter = try run(["meter", "in.wav"], in: dir, environment: ["AG_LAZY_LIBRARY_MISSING": "libebur128.so.1"])
        XCTAssertEqual(meter.status, 3, meter.stderr)
        XCTAssertEqual(meter.stdout, "")
        XCTAssertEqual(meter.stderr, "in.wav: cannot load libebur128: \(hiddenLibrary("libebur128.so.1"))\n")
        XCTAssertEqual(try run(["meter", "in.wav"], in: dir).status, 0)
    }
}
