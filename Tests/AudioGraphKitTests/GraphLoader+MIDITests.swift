// Tests of MIDI in graph files: a sampler's notes against fluidsynth's own rendering, a MIDI file's events at their frames, errors.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class GraphLoaderMIDITests: XCTestCase {
    typealias W = StandardMIDIFileWriter
    static let soundFont = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    func renderGraph(_ text: String, in dir: URL, name: String = "g.json") throws -> WAVFile {
        let v = try GraphLoader.parse(text: text, fileName: name, baseDirectory: dir.path)
        let out = dir.appendingPathComponent(name + ".wav").path
        let r = try OfflineRenderer(v, outputPath: out)
        try r.render(to: out)
        return try WAVFile(contentsOf: URL(fileURLWithPath: out))
    }

    /// The three-tempo file of the sequencer tests played by a graph's sampler (`midiFile`)
    /// renders exactly what the same graph renders from `notes` at the seconds the tempo spans
    /// give by hand; the render length is the last event plus the 2 s tail.
    func testAMIDIFilePlaysAtTheTimesOfItsTempoMap() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ticks = [7, 487, 961, 1203, 1447, 1921]
        try W(format: 1, division: 480, tracks: [
            [W.tempo(500_000, at: 0), W.tempo(250_000, at: 960), W.tempo(1_000_000, at: 1440)],
            ticks.flatMap { W.note(UInt8(60 + $0 % 12), at: $0, length: 200) },
        ]).data().write(to: dir.appendingPathComponent("t.mid"))
        func seconds(_ tick: Int) -> Double {
            let t = Double(tick)
            return tick <= 960 ? t / 960 : tick <= 1440 ? 1 + (t - 960) / 1920 : 1.25 + (t - 1440) / 480
        }
        func graph(_ properties: String) -> String {
            """
            { "version": 1, "sampleRate": 48000,
              "nodes": [ { "id": "s", "type": "sampler", "properties": { "soundfont": "\(Self.soundFont)", "program": 73, \(properties) } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "s", "to": "out" } ] }
            """
        }
        let notes = ticks.map { "{ \"time\": \(seconds($0)), \"key\": \(60 + $0 % 12), \"duration\": \(seconds($0 + 200) - seconds($0)) }" }
        let fromFile = try renderGraph(graph("\"midiFile\": \"t.mid\""), in: dir, name: "file.json")
        let fromNotes = try renderGraph(graph("\"notes\": [\(notes.joined(separator: ", "))]"), in: dir, name: "notes.json")
        XCTAssertEqual(fromFile.frameCount, Int(((seconds(2121) + 2) * 48000).rounded()))
        XCTAssertGreaterThan(SignalMeasurement.peak(fromFile.samples[0]), 0.01)
        XCTAssertEqual(fromFile.samples, fromNotes.samples)
    }

    /// `notes` rendered by the graph equal fluidsynth's command-line rendering of a MIDI file with
    /// the same note (after aligning the onsets: fluidsynth's player is one 64-frame block later).
    func testNotesMatchFluidSynthsOwnRendering() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let ours = try renderGraph("""
            { "version": 1, "sampleRate": 48000, "duration": 2.5,
              "nodes": [ { "id": "s", "type": "sampler", "properties": { "soundfont": "\(Self.soundFont)", "program": 0,
                             "notes": [ { "time": 0.5, "key": 64, "duration": 1.0, "velocity": 90 } ] } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "s", "to": "out" } ] }
            """, in: dir)
        try W(format: 0, division: 480, tracks: [[W.tempo(500_000, at: 0), .init(tick: 0, bytes: [0xC0, 0])] + W.note(64, velocity: 90, at: 480, length: 960)])
            .data().write(to: dir.appendingPathComponent("n.mid"))
        let wav = dir.appendingPathComponent("fs.wav")
        let p = try ChildProcess(executable: "/usr/bin/fluidsynth", arguments: ["-n", "-i", "-q", "-R", "0", "-C", "0", "-g", "0.2", "-r", "48000",
                                                                              "-O", "float", "-T", "wav", "-F", wav.path, Self.soundFont,
                                                                              dir.appendingPathComponent("n.mid").path], environment: [:])
        XCTAssertEqual(p.wait(timeout: 60), 0)
        let reference = try WAVFile(contentsOf: wav)
        let o = try XCTUnwrap(ours.samples[0].firstIndex { abs($0) > 1e-4 }), r = try XCTUnwrap(reference.samples[0].firstIndex { abs($0) > 1e-4 })
        let n = 60_000
        let a = Array(ours.samples[0][o..<(o + n)]), b = Array(reference.samples[0][r..<(r + n)])
        print("graph notes vs fluidsynth -F: onsets \(o) / \(r); level \(SignalMeasurement.dBFS(SignalMeasurement.rms(a))) / \(SignalMeasurement.dBFS(SignalMeasurement.rms(b))) dB; max difference \(SignalMeasurement.maxAbsDifference(a, b))")
        XCTAssertEqual(r - o, 64)
        XCTAssertEqual(SignalMeasurement.maxAbsDifference(a, b), 0, accuracy: 1e-6)
    }

    /// Bad MIDI properties are reported at their place in the file.
    func testBadMIDIPropertiesAreReportedWhereTheyAre() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try W(format: 0, division: 96, tracks: [W.note(60, at: 0, length: 96)]).data().write(to: dir.appendingPathComponent("one.mid"))
        try Data("MThd\0\0\0\u{6}\0\u{2}\0\u{1}\0`".utf8).write(to: dir.appendingPathComponent("f2.mid"))
        func problems(_ properties: String) -> String {
            do {
                _ = try GraphLoader.parse(text: """
                    { "version": 1, "nodes": [ { "id": "s", "type": "sampler", "properties": { \(properties) } }, { "id": "out", "type": "genericOutput" } ],
                      "connections": [ { "from": "s", "to": "out" } ] }
                    """, fileName: "g.json", baseDirectory: dir.path)
                return "no error"
            } catch { return error.description }
        }
        XCTAssertTrue(problems("\"midiFile\": \"f2.mid\"").contains("midiFile"), problems("\"midiFile\": \"f2.mid\""))
        XCTAssertTrue(problems("\"midiFile\": \"f2.mid\"").contains("f2.mid: byte 8: format 2 files are not supported"))
        XCTAssertTrue(problems("\"midiFile\": \"one.mid\", \"midiTracks\": [3]").contains("one.mid has 1 tracks (0...0); 3 is not one"))
        XCTAssertTrue(problems("\"notes\": [ { \"time\": 0, \"key\": 200, \"duration\": 1 } ]").contains("notes[0].key"),
                      problems("\"notes\": [ { \"time\": 0, \"key\": 200, \"duration\": 1 } ]"))
        XCTAssertTrue(problems("\"notes\": [ { \"time\": 0, \"key\": 60 } ]").contains("duration"))
    }
}

extension GraphLoaderMIDITests {
    /// A graph file's sampler with `sfz` plays its notes on the SFZ region (key 72 of a 440 Hz
    /// sample centred on 69: 440·2^(3/12) within 1 cent); a bad SFZ file is reported at
    /// `properties.sfz` with the SFZ file's line.
    func testASamplerPlaysAnSFZInstrumentFromAGraphFile() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let tone = (0..<72000).map { 0.5 * sin(2 * Double.pi * 440 * Double($0) / 48000) }
        try WAVFile(sampleRate: 48000, sampleType: .int16, channels: [tone]).write(to: dir.appendingPathComponent("a.wav"))
        try Data("<region> sample=a.wav pitch_keycenter=a4\n".utf8).write(to: dir.appendingPathComponent("i.sfz"))
        try Data("<region>\nsample=a.wav lokey=h9\n".utf8).write(to: dir.appendingPathComponent("bad.sfz"))
        func graph(_ sfz: String) -> String {
            """
            { "version": 1, "sampleRate": 48000,
              "nodes": [ { "id": "s", "type": "sampler", "properties": { "sfz": "\(sfz)", "notes": [ { "time": 0, "key": 72, "duration": 1 } ] } },
                         { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "s", "to": "out" } ] }
            """
        }
        let out = try renderGraph(graph("i.sfz"), in: dir)
        let f = try XCTUnwrap(ToneFit(dominantToneOf: out.samples[0][4800..<43200], sampleRate: 48000)).tones[0].frequency
        XCTAssertEqual(1200 * log2(f / (440 * pow(2, 3.0 / 12))), 0, accuracy: 1)
        do {
            _ = try GraphLoader.parse(text: graph("bad.sfz"), fileName: "g.json", baseDirectory: dir.path)
            XCTFail("bad.sfz was accepted")
        } catch {
            print(error.description)
            XCTAssertTrue(error.description.contains("properties.sfz"), error.description)
            XCTAssertTrue(error.description.contains("bad.sfz: line 2: lokey: h9 is not a key"), error.description)
        }
    }
}
