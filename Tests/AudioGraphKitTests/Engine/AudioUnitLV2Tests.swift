// Tests of AudioUnitLV2 through the engine: swh amp on a stereo sine, parameters, bypass, latency, refusals.
@testable import AudioGraphKit
import Foundation
import XCTest

final class AudioUnitLV2Tests: XCTestCase {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"

    func testAmpHalvesTheSineAndBypassRestoresIt() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 440, amplitude: 0.8)
        let amp = try AudioUnitLV2(uri: Self.amp)
        XCTAssertEqual(amp.parameters, [AudioUnitParameter(identifier: "gain", displayName: "Amps gain (dB)", minValue: -70,
                                                           maxValue: 70, defaultValue: 0, portIndex: 0)])
        try amp.setValue(-6.0206, forParameter: "gain")
        XCTAssertEqual(try amp.value(forParameter: "gain"), -6.0206)
        [source, amp].forEach(engine.attach)
        engine.connect(source, to: amp, format: nil)
        engine.connect(amp, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let out = try render(engine, frames: 2000)
        for c in 0..<2 {
            for n in 0..<2000 {
                XCTAssertEqual(Double(out[c][n]), 0.5 * Double(sineSample(Int64(n), frequency: 440, rate: 48000, amplitude: 0.8)), accuracy: 1e-4)
            }
        }
        amp.bypass = true
        let passed = try render(engine, frames: 1000)
        for n in 0..<1000 { XCTAssertEqual(passed[0][n], sineSample(Int64(2000 + n), frequency: 440, rate: 48000, amplitude: 0.8)) }
        XCTAssertEqual(amp.latency, 0)
    }

    func testLatencyIsThePluginsReport() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 440)
        let unit = try AudioUnitLV2(uri: "http://plugin.org.uk/swh-plugins/artificialLatency")
        try unit.setValue(10, forParameter: "delay")
        [source, unit].forEach(engine.attach)
        engine.connect(source, to: unit, format: nil)
        engine.connect(unit, to: engine.mainMixerNode, format: nil)
        try engine.start()
        _ = try render(engine, frames: 512)
        XCTAssertEqual(unit.latency, 0.01, accuracy: 1e-9)
    }

    func testUnknownURIAndSymbolThrowAndValuesOutsideThePluginsRangeAreClamped() throws {
        XCTAssertThrowsError(try AudioUnitLV2(uri: "urn:no:such")) { error in
            XCTAssertEqual(error as? LV2Error, .pluginNotFound(uri: "urn:no:such"))
        }
        let amp = try AudioUnitLV2(uri: Self.amp)
        XCTAssertThrowsError(try amp.setValue(0, forParameter: "volume"))
        // swh amp's gain port is -70...70 dB (its TTL): beyond, the value is clamped, as an AUParameter's.
        try amp.setValue(71, forParameter: "gain")
        XCTAssertEqual(try amp.value(forParameter: "gain"), 70)
        try amp.setValue(-.infinity, forParameter: "gain")
        XCTAssertEqual(try amp.value(forParameter: "gain"), -70)
        try amp.setValue(.nan, forParameter: "gain")
        XCTAssertEqual(try amp.value(forParameter: "gain"), -70, "NaN is ignored")
    }
}
