// AudioUnitDynamicsCompressor through the engine API in manual rendering: look-ahead, reduction, bypass.
import AudioGraphKit
import Foundation
import XCTest

final class AudioUnitDynamicsCompressorTests: XCTestCase {
    func testCompressesReportsReductionAndBypassPassesTheInputDelayed() throws {
        let comp = AudioUnitDynamicsCompressor()
        XCTAssertEqual(comp.threshold, -24)
        XCTAssertEqual(comp.ratio, 12)
        comp.ratio = 50
        XCTAssertEqual(comp.ratio, 20, "clamped to Web Audio's range")
        comp.ratio = 12
        XCTAssertEqual(comp.latency, 0.006)
        let engine = try makeManualEngine(through: comp)
        try engine.start()
        var out = try render(engine, frames: 9600)
        XCTAssertLessThan(comp.reduction, -3, "a 0.5 sine (-6 dBFS) is well above -24 dB")
        // Bypass: ratio 1, identity curve, makeup 1, release 0: the input exactly, 288 frames late
        // (from the next 128-frame quantum; 9600 is a multiple of 128).
        comp.bypass = true
        out = try render(engine, frames: 4800)
        for n in 0..<4800 { XCTAssertEqual(out[0][n], sineSample(Int64(9600 + n - 288), frequency: 440, rate: 48000)) }
        XCTAssertEqual(comp.ratio, 12, "bypass keeps the value set")
        XCTAssertEqual(comp.release, 0.25)
    }
}
