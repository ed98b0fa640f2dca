// AudioUnitPeakLimiter through the engine API in manual rendering: the ceiling holds with pre-gain.
import AudioGraphKit
import Foundation
import XCTest

final class AudioUnitPeakLimiterTests: XCTestCase {
    func testPreGainIsLimitedToTheCeiling() throws {
        let lim = AudioUnitPeakLimiter()
        XCTAssertEqual(lim.attackTime, 0.012)
        XCTAssertEqual(lim.decayTime, 0.024)
        lim.preGain = 20
        lim.ceiling = -2
        lim.attackTime = 0.005
        XCTAssertEqual(lim.latency, 0.005, accuracy: 1e-9)
        let engine = try makeManualEngine(through: lim)
        try engine.start()
        let out = try render(engine, frames: 24000)
        let ceiling = Float(pow(10, -2.0 / 20))
        let peak = out.flatMap { $0 }.map(abs).max()!
        XCTAssertLessThanOrEqual(peak, ceiling)
        XCTAssertGreaterThan(peak, 0.95 * ceiling)
    }
}
