// AudioUnitDynamicsProcessor through the engine API in manual rendering: compression, the amount, bypass.
import AudioGraphKit
import Foundation
import XCTest

final class AudioUnitDynamicsProcessorTests: XCTestCase {
    func testCompressesAndBypassPassesTheInput() throws {
        let dyn = AudioUnitDynamicsProcessor()
        XCTAssertEqual(dyn.threshold, -20)
        XCTAssertEqual(dyn.headRoom, 5)
        dyn.threshold = -30
        dyn.headRoom = 100
        XCTAssertEqual(dyn.headRoom, 40, "clamped to AUDynamicsProcessor's range")
        dyn.headRoom = 3
        let engine = try makeManualEngine(through: dyn)
        try engine.start()
        var out = try render(engine, frames: 9600)
        // A 0.5 sine peaks at -6 dBFS: 24 dB above -30, so its peaks come out near -27 dBFS.
        XCTAssertLessThan(dyn.compressionAmount, -10)
        XCTAssertLessThan(out[0][4800...].map(abs).max()!, 0.06)
        dyn.bypass = true
        _ = try render(engine, frames: 48000)   // the gain releases to 0 dB (50 ms time constant: 20 of them)
        out = try render(engine, frames: 4800)
        for n in 0..<4800 { XCTAssertEqual(out[0][n], sineSample(Int64(57600 + n), frequency: 440, rate: 48000), accuracy: 1e-6) }
        XCTAssertEqual(dyn.threshold, -30)
    }
}
