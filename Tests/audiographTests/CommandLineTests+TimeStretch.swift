// The command line with timePitch's `fastest` (WSOLA) quality: a render that keeps the pitch, and one that shifts it.
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

    /// `fastest` renders (the tone kept at 500 Hz); with a pitch shift of +100 cents `validate`
    /// says ok and `render` plays 500 · 2^(1/12) (before, both printed a one-line refusal and
    /// exited 1).
    func testTimePitchFastestRendersAndShiftsThePitch() throws {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        _ = try write(timeStretchGraph(pitch: 0), "kept.json", in: dir)
        let ok = try run(["render", "kept.json", "-o", "kept.wav", "--quiet"], in: dir, timeout: 60)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        let y = try AudioFileReader.read(path: dir.appendingPathComponent("kept.wav").path)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(y.channels[0][4800...], sampleRate: 48000) ?? 0, 500, accuracy: 0.5)
        _ = try write(timeStretchGraph(pitch: 100), "shift.json", in: dir)
        let v = try run(["validate", "shift.json"], in: dir, timeout: 30)
        XCTAssertEqual(v.status, 0, v.stderr)
        let r = try run(["render", "shift.json", "-o", "shift.wav", "--quiet"], in: dir, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let z = try AudioFileReader.read(path: dir.appendingPathComponent("shift.wav").path)
        XCTAssertEqual(SignalMeasurement.estimateFrequency(z.channels[0][4800...], sampleRate: 48000) ?? 0, 500 * pow(2, 1.0 / 12),
                       accuracy: 0.5)
    }
}
