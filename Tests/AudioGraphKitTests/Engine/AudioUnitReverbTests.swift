// AudioUnitReverb through the engine API in manual rendering: wet/dry, bypass, presets.
import AudioGraphKit
import Foundation
import XCTest

final class AudioUnitReverbTests: XCTestCase {
    func testDefaultsDryMixAndBypassPassTheInputExactly() throws {
        let reverb = AudioUnitReverb()
        XCTAssertEqual(reverb.wetDryMix, 50)
        XCTAssertEqual(reverb.name, "reverb")
        reverb.loadFactoryPreset(.cathedral)
        reverb.wetDryMix = 0
        let engine = try makeManualEngine(through: reverb, from: makeSineSource(frequency: 440))
        try engine.start()
        var out = try render(engine, frames: 4800)
        for n in 0..<4800 { XCTAssertEqual(out[0][n], sineSample(Int64(n), frequency: 440, rate: 48000)) }
        // Fully wet and bypassed: still the input, exactly.
        reverb.wetDryMix = 100
        reverb.bypass = true
        out = try render(engine, frames: 4800)
        for n in 0..<4800 { XCTAssertEqual(out[0][n], sineSample(Int64(4800 + n), frequency: 440, rate: 48000)) }
        // Bypass off: the room (it kept running); no dry signal, but a live tail.
        reverb.bypass = false
        out = try render(engine, frames: 4800)
        let dryError = (0..<4800).map { abs(out[0][$0] - sineSample(Int64(9600 + $0), frequency: 440, rate: 48000)) }.max()!
        XCTAssertGreaterThan(dryError, 0.05)
        XCTAssertGreaterThan(out[0].map { abs($0) }.max()!, 0.05)
    }

    func testPresetsChangeTheDecay() throws {
        // An impulse, fully wet: the small room has died down (-60 dB) after 0.6 s, the cathedral has not.
        func tailEnergy(_ preset: AudioUnitReverbPreset) throws -> Double {
            let reverb = AudioUnitReverb()
            reverb.loadFactoryPreset(preset)
            reverb.wetDryMix = 100
            let impulse = AudioSourceNode(format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!) { _, time, frameCount, data in
                let list = UnsafeMutableAudioBufferListPointer(data)
                for b in list { let p = b.mData!.assumingMemoryBound(to: Float.self); for i in 0..<Int(frameCount) { p[i] = 0 } }
                if time.pointee.mSampleTime == 0 { for b in list { b.mData!.assumingMemoryBound(to: Float.self)[0] = 1 } }
                return noErr
            }
            let engine = try makeManualEngine(through: reverb, from: impulse)
            try engine.start()
            let out = try render(engine, frames: 48000)
            let total = out[0].reduce(0) { $0 + Double($1 * $1) }
            let late = out[0][28800...].reduce(0) { $0 + Double($1 * $1) }
            return late / total
        }
        XCTAssertLessThan(try tailEnergy(.smallRoom), 1e-6)
        XCTAssertGreaterThan(try tailEnergy(.cathedral), 1e-2)
    }
}
