// AudioUnitVarispeed through the engine API in manual rendering: rate, rate changes, bypass, latency.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioUnitVarispeedTests: XCTestCase {
    func testRateDoublesThenHalvesTheFrequencyAndBypassRestoresIt() throws {
        let engine = try makeManualEngine()
        let source = makeSineSource(frequency: 1000)
        let varispeed = AudioUnitVarispeed()
        XCTAssertEqual(varispeed.rate, 1)
        varispeed.rate = 2
        engine.attach(source)
        engine.attach(varispeed)
        engine.connect(source, to: varispeed, format: nil)
        engine.connect(varispeed, to: engine.mainMixerNode, format: nil)
        try engine.start()
        XCTAssertEqual(varispeed.latency, 135.0 / 48000, accuracy: 1e-12)   // ceil(64 · 2 / 0.95) frames
        func dominant(_ x: [Float]) -> [Double] {
            ToneFit(x[500...], sampleRate: 48000, frequencies: [500, 1000, 2000]).tones.map(\.amplitude)
        }
        var a = dominant(try render(engine, frames: 9600)[0])
        XCTAssertEqual(a[2], 0.5, accuracy: 1e-3)
        XCTAssertLessThan(a[0] + a[1], 1e-4)
        varispeed.rate = 0.5
        a = dominant(try render(engine, frames: 9600)[0])
        XCTAssertEqual(a[0], 0.5, accuracy: 1e-3)
        XCTAssertLessThan(a[1] + a[2], 1e-4)
        varispeed.bypass = true
        a = dominant(try render(engine, frames: 9600)[0])
        XCTAssertEqual(a[1], 0.5, accuracy: 1e-3)
        XCTAssertLessThan(a[0] + a[2], 1e-4)
        XCTAssertEqual(varispeed.latency, 68.0 / 48000, accuracy: 1e-12)
    }
}
