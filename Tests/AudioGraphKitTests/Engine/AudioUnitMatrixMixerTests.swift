// Tests of AudioUnitMatrixMixer (AUMatrixMixer's volumes through the engine API) in manual rendering.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioUnitMatrixMixerTests: XCTestCase {
    /// Two constant sources (stereo 0.5 and mono 0.25) into a [2, 1] → [2, 1] matrix; output bus 0
    /// to the main mixer: left/right are the matrix formula of the set gains, while running too.
    func testGainsThroughTheEngine() throws {
        let engine = try makeManualEngine()
        let stereo = AudioConstantSourceNode(), mono = AudioConstantSourceNode()
        stereo.offset = 0.5
        mono.offset = 0.25
        let mx = AudioUnitMatrixMixer(inputs: [2, 1], outputs: [2, 1])
        XCTAssertEqual(mx.numberOfInputs, 2)
        XCTAssertEqual(mx.numberOfOutputs, 2)
        XCTAssertEqual(mx.inputChannelCount, 3)
        XCTAssertEqual(mx.outputChannelCount, 3)
        XCTAssertEqual(mx.gain(crosspointFromInput: 0, toOutput: 0), 0)
        XCTAssertEqual(mx.volume(inputChannel: 2), 1)
        XCTAssertEqual(mx.masterVolume, 1)
        mx.setGain(1, crosspointFromInput: 0, toOutput: 0)
        mx.setGain(-1, crosspointFromInput: 1, toOutput: 1)
        mx.setGain(2, crosspointFromInput: 2, toOutput: 0)
        mx.setGain(99, crosspointFromInput: 2, toOutput: 1)      // clamped to 16
        XCTAssertEqual(mx.gain(crosspointFromInput: 2, toOutput: 1), 16)
        mx.setVolume(0.8, inputChannel: 1)
        mx.setVolume(0.5, outputChannel: 1)
        mx.masterVolume = 0.5
        for n in [stereo, mono, mx] { engine.attach(n) }
        engine.connect(stereo, to: mx, fromBus: 0, toBus: 0, format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2))
        engine.connect(mono, to: mx, fromBus: 0, toBus: 1, format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 1))
        engine.connect(mx, to: engine.mainMixerNode, fromBus: 0, toBus: 0, format: nil)
        try engine.start()
        XCTAssertEqual(mx.outputFormat(forBus: 0).channelCount, 2)
        XCTAssertEqual(mx.outputFormat(forBus: 1).channelCount, 1)
        let y = try render(engine, frames: 1000)
        XCTAssertEqual(Double(y[0][500]), (1 * 0.5 + 2 * 0.25) * 0.5, accuracy: 1e-7)
        XCTAssertEqual(Double(y[1][500]), (-0.8 * 0.5 + 16 * 0.25) * 0.5 * 0.5, accuracy: 1e-6)
        mx.setGain(0, crosspointFromInput: 2, toOutput: 1)      // while running: the next slice
        let z = try render(engine, frames: 1000)
        XCTAssertEqual(Double(z[1][500]), -0.8 * 0.5 * 0.5 * 0.5, accuracy: 1e-7)
        XCTAssertEqual(engine.editFaultCount, 0)
    }

    /// Each unconnected input bus has its own channel count (inputs [1, 2]: mono, then stereo).
    func testUnconnectedInputBusesHaveTheirOwnChannelCounts() throws {
        let mx = AudioUnitMatrixMixer(inputs: [1, 2], outputs: [2])
        XCTAssertEqual(mx.inputFormat(forBus: 0).channelCount, 1)
        XCTAssertEqual(mx.inputFormat(forBus: 1).channelCount, 2)
        let engine = try makeManualEngine()
        engine.attach(mx)
        XCTAssertEqual(mx.inputFormat(forBus: 0).channelCount, 1)
        XCTAssertEqual(mx.inputFormat(forBus: 1).channelCount, 2)
    }
}
