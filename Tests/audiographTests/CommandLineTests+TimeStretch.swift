// The command line with timePitch's `fastest` (WSOLA) quality: a render that keeps the pitch, a pitch shift refused in one line.
import AudioGraphKit
import Foundation
import AudioGraphTesting
import XCTest

extension CommandLineTests {
    func timeStretchGraph(pitch: Double) -> String {
        """
        { "version": 1, "duration": 0.5,
          "nodes": [ { "id": "osc", "type": "oscillator", "parameters": { "frequency": 500 } },
                     { "id": "tp", "type": "timePitch", "parameters": { "rate": 1.25, "pitch": \(pitch) },
                       "properties": { "quality": "fastest" } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "osc", "to": "tp" }, { "from": "tp", "to": "out" } ] }
        """
    }

    /// `fastest` renders (the tone kept at 500 Hz); with a pitch shift `validate` and `render`
    /// print the same one line naming the file, the node and the mode, exit 1, and nothing is
    /// written (before the check moved to the resolve step, validate said "ok").
    func testTimePitchFastestRendersAndRefusesAPitchShiftInOneLine() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(timeStretchGraph(pitch: 0), "kept.json", in: dir)
        let ok = try run(["render", "kept.json", "-o", "kept.wav", "--quiet"], in: dir, timeout: 60)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        let y = try AudioFileReader.read(path: dir.appendingPathComponent("kept.wav").path)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y.channels[0][4800...], sampleRate: 48000) ?? 0, 500, accuracy: 0.5)
        _ = try write(timeStretchGraph(pitch: 100), "shift.json", in: dir)
        let expected = #"shift.json: nodes[1] (id "tp"): node "tp": quality "fastest" (WSOLA) keeps the pitch: it cannot shift it (pitch must be 0, without automation; use "finer" or "faster" to shift)"#
        let v = try run(["validate", "shift.json"], in: dir, timeout: 30)
        XCTAssertEqual(v.status, 1, v.stderr)
        XCTAssertEqual(v.stderrLines, [expected])
        let r = try run(["render", "shift.json", "-o", "shift.wav", "--quiet"], in: dir, timeout: 30)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderrLines, [expected])
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("shift.wav").path))
    }
}
