// Tests of `audiograph render song.mid --soundfont FILE`: the default sampler graph, slice-size independence, bad files.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

extension CommandLineTests {
    static let timGM = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    /// A 20-bar GM song (scripts/bench/make-gm-song.py, 21.2 s with its slower middle) rendered
    /// with --soundfont: exit 0, the time of its last event plus the 2 s release tail, sound; the same file bit for bit with
    /// --slice 441 --threads 1 as with --slice 4096 --threads 2.
    func testRenderOfAMIDIFileThroughTheSampler() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let song = dir.appendingPathComponent("song.mid").path
        try ReferenceScript.run("scripts/bench/make-gm-song.py", arguments: [song, "20"])
        let a = try run(["render", "song.mid", "--soundfont", Self.timGM, "-o", "a.wav", "--slice", "4096", "--threads", "2"], in: dir)
        XCTAssertEqual(a.status, 0, a.stderr)
        // The length: the last event (the tempo map from the file's own reader) plus the 2 s tail.
        let midi = try MIDIFile(contentsOf: song)
        let last = midi.tracks.compactMap { $0.events.last.map { midi.seconds(forTick: $0.tick) } }.max() ?? 0
        let frames = Int(((last + SamplerProperties.releaseTail) * 48000).rounded())
        let b = try run(["render", "song.mid", "--soundfont", Self.timGM, "-o", "b.wav", "--slice", "441", "--threads", "1", "--quiet"], in: dir)
        XCTAssertEqual(b.status, 0, b.stderr)
        let wa = try WAVFile(contentsOf: dir.appendingPathComponent("a.wav")), wb = try WAVFile(contentsOf: dir.appendingPathComponent("b.wav"))
        XCTAssertEqual(wa.frameCount, frames)
        XCTAssertGreaterThan(SignalMeasurement.peak(wa.samples[0]), 0.05)
        XCTAssertEqual(wa.samples, wb.samples)
        // The default output name is the MIDI file's.
        let c = try run(["render", "song.mid", "--soundfont", Self.timGM, "--duration", "1", "--quiet"], in: dir)
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("song.wav").path))
    }

    /// A MIDI file whose name holds a quote, a backslash, a tab and a space (the default sampler
    /// graph is JSON text written around the name, RenderJob's hand-written escaping) renders
    /// like any other, through the `audiograph` executable without Foundation.
    func testAMIDIFileWithQuotesAndBackslashesInItsNameRenders() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let name = "we\"ird\\ na\tme.mid"
        try ReferenceScript.run("scripts/bench/make-gm-song.py", arguments: [dir.appendingPathComponent(name).path, "2"])
        let r = try run(["render", name, "--soundfont", Self.timGM, "-o", "odd.wav", "--duration", "0.5", "--quiet"], in: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        let wav = try WAVFile(contentsOf: dir.appendingPathComponent("odd.wav"))
        XCTAssertEqual(wav.frameCount, 24_000)
        XCTAssertGreaterThan(SignalMeasurement.peak(wav.samples[0]), 0.01)
    }

    /// A 1 TiB sparse MIDI file and graph file are one line each with status 1, not a crash
    /// (both allocated their size whole before: "failed to allocate", status 134).
    func testHugeSparseFilesAreOneLineErrors() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        for name in ["big.mid", "big.json"] {
            let path = dir.appendingPathComponent(name).path
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
            XCTAssertEqual(truncate(path, 1 << 40), 0)
            let r = try run(["render", name, "-o", "x.wav", "--quiet"], in: dir)
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("too large"), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.wav").path))
        }
    }

    /// A damaged MIDI file, a missing one, a file that is not a SoundFont, and --soundfont with a
    /// graph: exit 1, one line naming the file (and the byte), nothing written.
    func testBadMIDIRendersAreOneLineErrors() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try Data("MThd\0\0\0\u{6}\0\u{2}\0\u{1}\0`".utf8).write(to: dir.appendingPathComponent("f2.mid"))
        let f2 = try run(["render", "f2.mid", "-o", "x.wav"], in: dir)
        XCTAssertEqual(f2.status, 1)
        XCTAssertEqual(f2.stderrLines, ["f2.mid: byte 8: format 2 files are not supported (only 0 and 1)"], f2.stderr)
        let missing = try run(["render", "none.mid", "-o", "x.wav"], in: dir)
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderrLines.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("none.mid"), missing.stderr)
        try StandardMIDIFileWriter(format: 0, division: 96, tracks: [StandardMIDIFileWriter.note(60, at: 0, length: 96)]).data()
            .write(to: dir.appendingPathComponent("ok.mid"))
        try Data("not a soundfont".utf8).write(to: dir.appendingPathComponent("bad.sf2"))
        let sf = try run(["render", "ok.mid", "--soundfont", "bad.sf2", "-o", "x.wav"], in: dir)
        XCTAssertEqual(sf.status, 1)
        XCTAssertTrue(sf.stderrLines.contains { $0.contains("bad.sf2") }, sf.stderr)
        _ = try write(sine, "sine.json", in: dir)
        let graph = try run(["render", "sine.json", "--soundfont", Self.timGM, "-o", "x.wav"], in: dir)
        XCTAssertEqual(graph.status, 1)
        XCTAssertEqual(graph.stderrLines.count, 1, graph.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.wav").path))
    }
}
