// Tests of MIDI into lv2 nodes in graph files: synthv1 plays `notes` at their frames and frequencies, a MIDI file at its tempo map, errors.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class LV2InstrumentOptionsTests: XCTestCase {
    typealias W = StandardMIDIFileWriter
    static let synthv1 = "http://synthv1.sourceforge.net/lv2"
    static let amp = "http://plugin.org.uk/swh-plugins/amp"

    func renderGraph(_ text: String, in dir: URL, name: String) throws -> WAVFile {
        let v = try GraphLoader.parse(text: text, fileName: name, baseDirectory: dir.path)
        let out = dir.appendingPathComponent(name + ".wav").path
        try OfflineRenderer(v, outputPath: out).render(to: out)
        return try WAVFile(contentsOf: URL(fileURLWithPath: out))
    }

    /// A graph with synthv1 (oscillator detune and LFOs off) given `properties`, into a generic output.
    func synthGraph(_ properties: String, duration: String = "") -> String {
        """
        { "version": 1, "sampleRate": 48000, \(duration)
          "nodes": [ { "id": "syn", "type": "lv2",
                       "properties": { "plugin": "\(Self.synthv1)", \(properties) },
                       "parameters": { "DCO1_DETUNE": 0, "DCO2_DETUNE": 0, "LFO1_ENABLED": 0, "LFO2_ENABLED": 0 } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "syn", "to": "out" } ] }
        """
    }

    /// The frequency in `range` whose DFT magnitude over `x` is largest (0.5 Hz grid, then
    /// golden-section search to 1e-4 Hz).
    func dominantFrequency(_ x: ArraySlice<Double>, in range: ClosedRange<Double>) -> Double {
        let x = Array(x)
        func magnitude(_ f: Double) -> Double {
            var re = 0.0, im = 0.0
            for (n, y) in x.enumerated() {
                let w = 2 * Double.pi * f * Double(n) / 48000
                re += y * cos(w)
                im -= y * sin(w)
            }
            return re * re + im * im
        }
        var best = range.lowerBound, bestMagnitude = 0.0
        for f in stride(from: range.lowerBound, through: range.upperBound, by: 0.5) where magnitude(f) > bestMagnitude {
            best = f
            bestMagnitude = magnitude(f)
        }
        var a = best - 0.5, b = best + 0.5
        let r = (sqrt(5.0) - 1) / 2
        while b - a > 1e-4 {
            let c = b - r * (b - a), d = a + r * (b - a)
            if magnitude(c) > magnitude(d) { b = d } else { a = c }
        }
        return (a + b) / 2
    }

    /// A graph file's `notes` on synthv1: A4 at 10007/48000 s and A5 at 40007/48000 s (frames
    /// 10007 and 40007 by the schedule's rounding): silent before 10007, sounding from within two
    /// frames of it (synthv1's attack; measured: 10007 exactly); fundamentals 440 and 880 Hz
    /// within 1 cent (measured: -0.04 and -0.0005 cent); the render length is the last event
    /// plus the 2 s release tail.
    func testSynthv1PlaysAGraphFilesNotesAtTheirFramesAndFrequencies() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let out = try renderGraph(synthGraph("""
            "notes": [ { "time": \(10_007.0 / 48000), "key": 69, "duration": \(24_000.0 / 48000) },
                       { "time": \(40_007.0 / 48000), "key": 81, "duration": \(24_000.0 / 48000), "velocity": 100 } ]
            """), in: dir, name: "notes.json")
        XCTAssertEqual(out.frameCount, 64_007 + 96_000)
        let left = out.samples[0]
        let first = try XCTUnwrap(left.firstIndex { $0 != 0 })
        print("synthv1 from graph notes: first non-zero sample at \(first) (note at 10007)")
        XCTAssertGreaterThanOrEqual(first, 10_007)
        XCTAssertLessThanOrEqual(first, 10_009)
        let a4 = dominantFrequency(left[14_000..<33_200], in: 400...480)
        let a5 = dominantFrequency(left[44_000..<63_200], in: 840...920)
        print("synthv1 from graph notes: A4 \(a4) Hz (\(1200 * log2(a4 / 440)) cents), A5 \(a5) Hz (\(1200 * log2(a5 / 880)) cents)")
        XCTAssertEqual(1200 * log2(a4 / 440), 0, accuracy: 1)
        XCTAssertEqual(1200 * log2(a5 / 880), 0, accuracy: 1)
    }

    /// A MIDI file with three tempo spans played into synthv1 (`midiFile`) renders exactly what
    /// the same graph renders from `notes` at the seconds the tempo spans give by hand, and its
    /// first note sounds within two frames of round(seconds(tick 7) · 48000) = 350.
    func testAMIDIFilePlaysIntoAnLV2InstrumentAtItsTempoMap() throws {
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
        let notes = ticks.map { "{ \"time\": \(seconds($0)), \"key\": \(60 + $0 % 12), \"duration\": \(seconds($0 + 200) - seconds($0)) }" }
        let fromFile = try renderGraph(synthGraph("\"midiFile\": \"t.mid\""), in: dir, name: "file.json")
        let fromNotes = try renderGraph(synthGraph("\"notes\": [\(notes.joined(separator: ", "))]"), in: dir, name: "notes.json")
        XCTAssertEqual(fromFile.frameCount, Int(((seconds(2121) + 2) * 48000).rounded()))
        let first = try XCTUnwrap(fromFile.samples[0].firstIndex { $0 != 0 })
        let expected = Int((seconds(7) * 48000).rounded())
        print("synthv1 from a MIDI file: first non-zero sample at \(first) (formula \(expected))")
        XCTAssertTrue((expected...(expected + 2)).contains(first))
        XCTAssertGreaterThan(SignalMeasurement.peak(fromFile.samples[0]), 0.01)
        XCTAssertEqual(fromFile.samples, fromNotes.samples)
    }

    /// MIDI keys on an effect plugin, a damaged MIDI file and a bad note are one-line errors at
    /// their place in the file.
    func testBadMIDIPropertiesOnLV2NodesAreReportedWhereTheyAre() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        try Data("MThd\0\0\0\u{6}\0\u{2}\0\u{1}\0`".utf8).write(to: dir.appendingPathComponent("f2.mid"))
        func problems(_ text: String) -> String {
            do {
                _ = try GraphLoader.parse(text: text, fileName: "g.json", baseDirectory: dir.path)
                return "no error"
            } catch { return error.description }
        }
        let effect = problems("""
            { "version": 1, "nodes": [ { "id": "o", "type": "oscillator" },
                { "id": "a", "type": "lv2", "properties": { "plugin": "\(Self.amp)", "notes": [ { "time": 0, "key": 60, "duration": 1 } ] } },
                { "id": "out", "type": "genericOutput" } ],
              "connections": [ { "from": "o", "to": "a" }, { "from": "a", "to": "out" } ] }
            """)
        print(effect)
        XCTAssertTrue(effect.contains("properties.notes"), effect)
        XCTAssertTrue(effect.contains("LV2 plugin <\(Self.amp)> has no MIDI input"), effect)
        XCTAssertEqual(effect.split(separator: "\n").count, 1, effect)
        let damaged = problems(synthGraph("\"midiFile\": \"f2.mid\""))
        XCTAssertTrue(damaged.contains("properties.midiFile"), damaged)
        XCTAssertTrue(damaged.contains("f2.mid: byte 8: format 2 files are not supported"), damaged)
        let badNote = problems(synthGraph("\"notes\": [ { \"time\": 0, \"key\": 200, \"duration\": 1 } ]"))
        XCTAssertTrue(badNote.contains("notes[0].key"), badNote)
    }

    /// The MIDI keys are refused for any found plugin without a MIDI input, also one with no
    /// parameters at all (it was accepted: the refusal asked for a non-empty parameter list), and
    /// not for a plugin that was not found (reported on `plugin` alone) or an instrument.
    func testMIDIKeysAreRefusedForEveryFoundPluginWithoutAMIDIInput() {
        XCTAssertTrue(LV2InstrumentOptions.refusesMIDI(LV2Properties(plugin: "urn:no-ports", parameters: [])))
        var instrument = LV2Properties(plugin: "urn:synth", parameters: [])
        instrument.takesMIDI = true
        XCTAssertFalse(LV2InstrumentOptions.refusesMIDI(instrument))
        var unknown = LV2Properties(plugin: "urn:unknown")
        unknown.found = false
        XCTAssertFalse(LV2InstrumentOptions.refusesMIDI(unknown))
    }
}
