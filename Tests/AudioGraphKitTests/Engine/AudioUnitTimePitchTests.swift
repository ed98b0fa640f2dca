// AudioUnitTimePitch through the engine API: pitch and rate in manual rendering, changes while running, bypass, latency, range errors.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioUnitTimePitchTests: XCTestCase {
    /// source (440 Hz, 0.5) -> timePitch -> main mixer, offline manual rendering at 48 kHz.
    func makeEngine(_ configure: (AudioUnitTimePitch) -> Void) throws -> (AudioEngine, AudioUnitTimePitch) {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 440)
        let unit = AudioUnitTimePitch()
        configure(unit)
        engine.attach(source)
        engine.attach(unit)
        engine.connect(source, to: unit, format: nil)
        engine.connect(unit, to: engine.mainMixerNode, format: nil)
        try engine.start()
        return (engine, unit)
    }

    func frequency(_ x: [Float]) -> Double { SignalMeasurement.estimateFrequency(x, sampleRate: 48000) ?? 0 }

    /// `.fastest` (WSOLA, a Linux addition): rate 2 keeps the 440 Hz tone; with a pitch of
    /// +300 cents set before the engine starts it plays 440 · 2^(3/12) (before, the engine
    /// refused to start).
    func testFastestKeepsThePitchAtRateTwoAndShiftsIt() throws {
        let (engine, _) = try makeEngine { $0.quality = .fastest; $0.rate = 2 }
        let y = try render(engine, frames: 24000)
        XCTAssertEqual(frequency(Array(y[0][4800...])), 440, accuracy: 0.5)
        let (shifted, _) = try makeEngine { $0.quality = .fastest; $0.pitch = 300 }
        let z = try render(shifted, frames: 24000)
        XCTAssertEqual(frequency(Array(z[0][4800...])), 440 * pow(2, 300.0 / 1200), accuracy: 0.5)
        XCTAssertEqual(z[0], z[1], "both channels alike")
    }

    /// `.fastest` on a running engine (offline manual rendering, slices of 512): the pitch set
    /// between two renders (-1200, then +700, then back to 0) is heard from the following
    /// slices: the tone is the new pitch's from at most 2 slices after the change (the shift
    /// starts at the next block of 256 frames), measured per 512-frame slice by zero crossings.
    /// (Before, the pitch set while running was ignored: every slice stayed at 440 Hz.)
    func testFastestFollowsThePitchSetWhileRunning() throws {
        let (engine, unit) = try makeEngine { $0.quality = .fastest; $0.rate = 1.25 }
        _ = try render(engine, frames: 9728, piece: 512)
        for cents in [-1200.0, 700, 0] {
            unit.pitch = Float(cents)
            XCTAssertEqual(unit.pitch, Float(cents))
            let y = try render(engine, frames: 512 * 24, piece: 512)[0]
            let expected = 440 * pow(2, cents / 1200)
            // The first slice whose own frequency is the new pitch's, within 1 %.
            let first = (0..<24).first { k in
                abs((SignalMeasurement.estimateFrequency(y[(k * 512)..<((k + 1) * 512)], sampleRate: 48000) ?? 0) - expected) < 0.01 * expected
            }
            XCTAssertNotNil(first, "\(cents) cents: never heard")
            XCTAssertLessThanOrEqual(first ?? 99, 2, "\(cents) cents: slices before the shift")
            XCTAssertEqual(frequency(Array(y[2048...])), expected, accuracy: 0.5, "\(cents) cents")
        }
    }

    func testDefaultsAndName() {
        let unit = AudioUnitTimePitch()
        XCTAssertEqual(unit.rate, 1)
        XCTAssertEqual(unit.pitch, 0)
        XCTAssertEqual(unit.overlap, 8)
        XCTAssertFalse(unit.bypass)
        XCTAssertEqual(unit.name, "timePitch")
        XCTAssertEqual(unit.latency, 0, "no node yet")
    }

    func testAnOctaveUpThenBackWhileRunning() throws {
        let (engine, unit) = try makeEngine { $0.pitch = 1200 }
        XCTAssertGreaterThan(unit.latency, 0, "rubberband's start delay, read ahead")
        XCTAssertLessThan(unit.latency, 0.2)
        let up = try render(engine, frames: 24000)
        XCTAssertEqual(frequency(Array(up[0][4800...])), 880, accuracy: 1)
        XCTAssertEqual(up[0], up[1], "both channels alike")
        unit.pitch = 0
        let back = try render(engine, frames: 24000)
        XCTAssertEqual(frequency(Array(back[0][9600...])), 440, accuracy: 0.5)
        XCTAssertEqual(ToneFit(back[0][9600...], sampleRate: 48000, frequencies: [440]).tones[0].amplitude, 0.5, accuracy: 0.05)
    }

    func testRateTwoKeepsThePitchAndPullsTwiceTheInput() throws {
        let (engine, unit) = try makeEngine { $0.rate = 2 }
        XCTAssertEqual(unit.rate, 2)
        let y = try render(engine, frames: 24000)
        XCTAssertEqual(frequency(Array(y[0][4800...])), 440, accuracy: 0.5)
    }

    func testBypassPassesTheSourceThrough() throws {
        let (engine, unit) = try makeEngine { $0.pitch = -700; $0.rate = 0.5 }
        _ = try render(engine, frames: 4864)   // 19 blocks of 256: bypass takes effect at a block boundary
        unit.bypass = true
        let y = try render(engine, frames: 9600)
        // 1:1 on the source's own timeline: the source's sine, exactly (a continuous phase).
        let fit = ToneFit(y[0], sampleRate: 48000, frequencies: [440])
        XCTAssertEqual(fit.tones[0].amplitude, 0.5, accuracy: 1e-4)
        XCTAssertLessThan(fit.residualRMS, 1e-4)
        XCTAssertEqual(unit.pitch, -700, "bypass keeps the values")
        unit.bypass = false
        let z = try render(engine, frames: 24000)
        XCTAssertEqual(frequency(Array(z[0][9600...])), 440 * pow(2, -700.0 / 1200), accuracy: 0.5)
    }

    func testAValueOutsideItsRangeIsClamped() {
        // AVAudioUnitTimePitch's documented ranges: rate 1/32...32, pitch -2400...2400, overlap 3...32.
        let unit = AudioUnitTimePitch()
        unit.rate = 64
        unit.pitch = -1e9
        unit.overlap = 1
        XCTAssertEqual(unit.rate, 32)
        XCTAssertEqual(unit.pitch, -2400)
        XCTAssertEqual(unit.overlap, 3)
    }
}
