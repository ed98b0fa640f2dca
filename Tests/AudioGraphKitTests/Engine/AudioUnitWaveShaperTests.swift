// AudioUnitWaveShaper through the engine API in manual rendering: a curve, a change while running, bypass.
import AudioGraphKit
import Foundation
import XCTest

final class AudioUnitWaveShaperTests: XCTestCase {
    func testCurveChangesAndBypass() throws {
        let ws = AudioUnitWaveShaper()
        ws.curve = [0, 0, 1]   // half-wave rectifier on [-1, 1]
        let engine = try makeManualEngine(through: ws)
        try engine.start()
        var out = try render(engine, frames: 2400)
        for n in 0..<2400 { XCTAssertEqual(out[0][n], max(0, sineSample(Int64(n), frequency: 440, rate: 48000)), accuracy: 1e-6) }
        ws.curve = [1, 0, 1]   // full-wave
        out = try render(engine, frames: 2400)
        for n in 0..<2400 { XCTAssertEqual(out[0][n], abs(sineSample(Int64(2400 + n), frequency: 440, rate: 48000)), accuracy: 1e-6) }
        ws.bypass = true
        out = try render(engine, frames: 2400)
        for n in 0..<2400 { XCTAssertEqual(out[0][n], sineSample(Int64(4800 + n), frequency: 440, rate: 48000)) }
        XCTAssertEqual(ws.curve, [1, 0, 1])
    }
}
