// The input node in manual rendering with setManualRenderingInputPCMFormat(_:inputBlock:): the block's audio, converted, is what the engine renders.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioInputNodeTests: XCTestCase {
    /// Int16 interleaved stereo from the block (a different value per frame and channel, as an
    /// application's microphone buffer would be), through the main mixer: the output is
    /// exactly x/32768, frame for frame, in 1000-frame renders of 480-frame... any pieces.
    func testTheBlocksInt16InterleavedAudioIsRenderedExactly() throws {
        let engine = try makeManualEngine()
        let format = try XCTUnwrap(AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 48000, channels: 2, interleaved: true))
        let samples = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * 4096)
        defer { samples.deallocate() }
        let list = AudioBufferList.allocate(maximumBuffers: 1)
        defer { free(list.unsafeMutablePointer) }
        func value(_ c: Int, _ n: Int) -> Int16 { Int16(truncatingIfNeeded: (n * 37 + c * 11_000) % 60_000 - 30_000) }
        var next = 0, calls: [Int] = []
        XCTAssertTrue(engine.inputNode.setManualRenderingInputPCMFormat(format) { frameCount in
            let n = Int(frameCount)
            calls.append(n)
            for i in 0..<n { for c in 0..<2 { samples[2 * i + c] = value(c, next + i) } }
            next += n
            list[0] = AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(4 * n), mData: UnsafeMutableRawPointer(samples))
            return UnsafePointer(list.unsafeMutablePointer)
        })
        engine.connect(engine.inputNode, to: engine.mainMixerNode, format: nil)
        XCTAssertEqual(engine.inputNode.outputFormat(forBus: 0).channelCount, 2)
        try engine.start()
        let out = try render(engine, frames: 5000, piece: 1000)
        XCTAssertEqual(calls.reduce(0, +), 5000)
        for c in 0..<2 {
            XCTAssertEqual(out[c], (0..<5000).map { Float(value(c, $0)) / 32768 }, "channel \(c)")
        }
    }

    /// Float mono, non-interleaved; nil from the block is silence; the mono input feeds both
    /// sides of the mixer alike.
    func testNilIsSilenceAndMonoFloatWorks() throws {
        let engine = try makeManualEngine()
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 4096))
        var call = 0
        XCTAssertTrue(engine.inputNode.setManualRenderingInputPCMFormat(format) { frameCount in
            call += 1
            guard call % 2 == 1 else { return nil }
            buffer.frameLength = frameCount
            for i in 0..<Int(frameCount) { buffer.floatChannelData![0][i] = 0.5 }
            return buffer.audioBufferList
        })
        engine.connect(engine.inputNode, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let out = try render(engine, frames: 4000, piece: 1000)
        for piece in 0..<4 {
            let slice = out[0][(piece * 1000)..<((piece + 1) * 1000)]
            if piece % 2 == 0 {
                XCTAssertTrue(slice.allSatisfy { $0 > 0.3 }, "piece \(piece) should carry the input")
            } else {
                XCTAssertTrue(slice.allSatisfy { $0 == 0 }, "piece \(piece) should be silent")
            }
        }
        XCTAssertEqual(out[0], out[1])
    }

    /// After a full slice, a list shorter than the slice (600 of 1000 frames' bytes) with fewer
    /// buffers than the format's (the second channel's missing): what is missing is silence (not
    /// the slice before), what is there is rendered exactly.
    func testWhatAShortListLacksIsSilence() throws {
        let engine = try makeManualEngine()
        let format = try XCTUnwrap(AudioFormat(standardFormatWithSampleRate: 48000, channels: 2))
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: 2000)
        defer { samples.deallocate() }
        for i in 0..<2000 { samples[i] = Float(i + 1) / 4000 }
        var list = AudioBufferList.allocate(maximumBuffers: 2)
        defer { free(list.unsafeMutablePointer) }
        var call = 0
        XCTAssertTrue(engine.inputNode.setManualRenderingInputPCMFormat(format) { frameCount in
            call += 1
            let bytes = call == 1 ? 4 * Int(frameCount) : 4 * 600
            list.count = call == 1 ? 2 : 1
            for b in 0..<list.count {
                list[b] = AudioBuffer(mNumberChannels: 1, mDataByteSize: UInt32(bytes), mData: UnsafeMutableRawPointer(samples + 1000 * b))
            }
            return UnsafePointer(list.unsafeMutablePointer)
        })
        engine.connect(engine.inputNode, to: engine.mainMixerNode, format: nil)
        try engine.start()
        let out = try render(engine, frames: 2000, piece: 1000)
        XCTAssertEqual(call, 2)
        XCTAssertEqual(out[0], (0..<1000).map { Float($0 + 1) / 4000 } + (0..<1000).map { $0 < 600 ? Float($0 + 1) / 4000 : 0 })
        XCTAssertEqual(out[1], (0..<1000).map { Float($0 + 1001) / 4000 } + [Float](repeating: 0, count: 1000))
    }

    /// Refused (false, nothing changes) outside manual rendering, at another rate, or running.
    func testRefusals() throws {
        let live = AudioEngine()
        let f = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        XCTAssertFalse(live.inputNode.setManualRenderingInputPCMFormat(f) { _ in nil })
        let engine = try makeManualEngine()
        XCTAssertFalse(engine.inputNode.setManualRenderingInputPCMFormat(AudioFormat(standardFormatWithSampleRate: 44100, channels: 2)!) { _ in nil })
        engine.connect(engine.inputNode, to: engine.mainMixerNode, format: nil)
        try engine.start()
        XCTAssertFalse(engine.inputNode.setManualRenderingInputPCMFormat(f) { _ in nil })
    }
}

/// Voice processing's switch, as Apple's: one for both I/O nodes (enabling it makes the input
/// node exist), the input's switches with Apple's defaults, refused in manual rendering.
final class AudioIONodeVoiceProcessingTests: XCTestCase {
    func testEnablingOnOneIONodeEnablesBothAndDisablingOnEitherDisablesBoth() throws {
        let engine = AudioEngine()
        XCTAssertFalse(engine.outputNode.isVoiceProcessingEnabled)
        try engine.outputNode.setVoiceProcessingEnabled(true)
        XCTAssertTrue(engine.attachedNodes.contains(engine.inputNode))
        XCTAssertTrue(engine.inputNode.isVoiceProcessingEnabled)
        XCTAssertTrue(engine.outputNode.isVoiceProcessingEnabled)
        XCTAssertTrue(engine.inputNode.isVoiceProcessingAGCEnabled)
        XCTAssertFalse(engine.inputNode.isVoiceProcessingBypassed)
        XCTAssertFalse(engine.inputNode.isVoiceProcessingInputMuted)
        XCTAssertEqual(engine.inputNode.voiceProcessingLatency, 0, "no graph yet")
        let ducking = engine.inputNode.voiceProcessingOtherAudioDuckingConfiguration
        XCTAssertFalse(ducking.enableAdvancedDucking.boolValue)
        XCTAssertEqual(ducking.duckingLevel, .default)
        engine.inputNode.voiceProcessingOtherAudioDuckingConfiguration = .init(enableAdvancedDucking: true, duckingLevel: .max)
        XCTAssertEqual(engine.inputNode.voiceProcessingOtherAudioDuckingConfiguration.duckingLevel.rawValue, 30)
        XCTAssertTrue(engine.inputNode.setMutedSpeechActivityEventListener { _ in })
        XCTAssertEqual(AudioVoiceProcessingSpeechActivityEvent.ended.rawValue, 1)
        try engine.inputNode.setVoiceProcessingEnabled(false)
        XCTAssertFalse(engine.outputNode.isVoiceProcessingEnabled)
        XCTAssertFalse(engine.inputNode.isVoiceProcessingEnabled)
    }

    func testManualRenderingRefusesVoiceProcessingWithAOneLineReason() throws {
        let engine = try makeManualEngine()
        for node in [engine.inputNode as AudioIONode, engine.outputNode] {
            XCTAssertNoThrow(try node.setVoiceProcessingEnabled(false))
            XCTAssertThrowsError(try node.setVoiceProcessingEnabled(true)) { error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix("setVoiceProcessingEnabled(_:): ") && !text.contains("\n"), text)
                XCTAssertEqual((error as? AudioEngineError)?.code, AudioEngineError.invalidModeCode)
            }
            XCTAssertFalse(node.isVoiceProcessingEnabled)
        }
    }
}
