// Updates that change properties while rendering: the typed values reach the running kernels.
import AudioGraphKit
import XCTest

final class GraphBuilderTests: XCTestCase {
    /// A player's segment, loop and start time, and an oscillator's waveform and stop time,
    /// changed by `setProperty` updates at exact frames.
    func testSetPropertyUpdatesReachRunningPlayerAndOscillator() throws {
        let dir = try makeTemporaryDirectory(self)
        // A ramp file: sample n has the value n / 48000, so positions are readable from the output.
        try writeWAV(dir.path + "/ramp.wav", [(0..<48000).map { Float($0) / 48000 }], sampleRate: 48000)
        let v = try parseGraph(#"""
        { "version": 1, "duration": 0.5,
          "nodes": [ { "id": "p", "type": "player", "properties": { "file": "ramp.wav" } },
                     { "id": "o", "type": "oscillator", "parameters": { "frequency": 1000, "amplitude": 0.5 } },
                     { "id": "m", "type": "mixer", "inputBusCount": 2, "parameters": { "input.0.pan": -1, "input.1.pan": 1 } },
                     { "id": "out", "type": "genericOutput" } ],
          "connections": [ { "from": "p", "to": "m:0" }, { "from": "o", "to": "m:1" }, { "from": "m", "to": "out" } ],
          "updates": [
            { "frame": 1000, "actions": [
              { "setProperty": { "node": "p", "name": "segment", "value": { "start": 0.5, "duration": 0.01 } } },
              { "setProperty": { "node": "p", "name": "loop", "value": true } },
              { "setProperty": { "node": "o", "name": "stopTime", "value": 0.1 } } ] },
            { "frame": 6000, "actions": [
              { "setProperty": { "node": "o", "name": "waveform", "value": "square" } },
              { "setProperty": { "node": "o", "name": "stopTime", "value": 1.0 } } ] } ] }
        """#, in: dir)
        let (channels, _) = try renderToFile(v, dir.path + "/out.wav", slice: 333)
        let left = channels[0], right = channels[1]
        // Before frame 1000: the whole file from position n.
        for n in [0, 1, 500, 999] { XCTAssertEqual(Double(left[n]), Double(n) / 48000, accuracy: 1e-7, "frame \(n)") }
        // From frame 1000: the segment [24000, 24480) looped, still counted from the node's start (frame 0).
        for n in [1000, 1234, 4000, 23999] {
            let expected = Double(24000 + n % 480) / 48000
            XCTAssertEqual(Double(left[n]), expected, accuracy: 1e-7, "frame \(n)")
        }
        // The oscillator stops at 0.1 s (frame 4800) after the first update, then restarts as a square wave
        // at frame 6000 (stopTime moved to 1 s): silent in between.
        XCTAssertGreaterThan(right[2000..<4800].map { abs($0) }.max()!, 0.4)
        XCTAssertEqual(right[4800..<6000].map { abs($0) }.max()!, 0)
        let square = right[6000..<12000].map { abs($0) }
        // A band-limited square at amplitude 0.5 sits near 0.5 most of the time (a sine would not).
        let nearFull = square.filter { $0 > 0.45 && $0 < 0.56 }.count
        XCTAssertGreaterThan(nearFull, square.count * 7 / 10)
    }
}
