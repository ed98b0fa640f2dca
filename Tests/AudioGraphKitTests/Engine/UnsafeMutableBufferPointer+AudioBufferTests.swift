// The CoreAudio overlay's typed views of an AudioBuffer, as Apple's SignalGenerator sample uses them.
import AudioGraphKit
import XCTest

final class UnsafeMutableBufferPointerAudioBufferTests: XCTestCase {
    func testTheViewCoversTheBuffersBytes() {
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: 8)
        defer { memory.deallocate() }
        let buffer = AudioBuffer(mNumberChannels: 1, mDataByteSize: 24, mData: memory)
        let floats = UnsafeMutableBufferPointer<Float>(buffer)
        XCTAssertEqual(floats.count, 6)
        XCTAssertEqual(floats.baseAddress, memory)
        floats[5] = 2.5
        XCTAssertEqual(memory[5], 2.5)
        XCTAssertEqual(UnsafeBufferPointer<Int16>(buffer).count, 12)
        XCTAssertEqual(UnsafeMutableBufferPointer<Float>(AudioBuffer()).count, 0)
    }

    /// Apple's SignalGenerator render block, ported by dropping the prefix: the value of each
    /// frame written to every buffer through `UnsafeMutableBufferPointer<Float>(buffer)`.
    func testSignalGeneratorRenderBlockWritesThroughTheView() throws {
        let engine = try makeManualEngine(format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!)
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        final class Phase { var currentPhase: Float = 0 }
        let state = Phase()
        let phaseIncrement = (2 * Float.pi / 48000) * 440
        let sourceNode = AudioSourceNode(format: format) { _, _, frameCount, audioBufferList -> OSStatus in
            let ablPointer = UnsafeMutableAudioBufferListPointer(audioBufferList)
            for frame in 0..<Int(frameCount) {
                let value = 0.5 * sin(state.currentPhase)
                state.currentPhase += phaseIncrement
                if state.currentPhase >= 2 * .pi { state.currentPhase -= 2 * .pi }
                for buffer in ablPointer {
                    let buf: UnsafeMutableBufferPointer<Float> = UnsafeMutableBufferPointer(buffer)
                    buf[frame] = value
                }
            }
            return noErr
        }
        engine.attach(sourceNode)
        engine.connect(sourceNode, to: engine.mainMixerNode, format: format)
        try engine.start()
        let out = try render(engine, frames: 4800, piece: 480)
        engine.stop()
        var phase: Float = 0
        var worst: Float = 0
        for n in 0..<4800 {
            let expected = 0.5 * sin(phase)
            phase += phaseIncrement
            if phase >= 2 * .pi { phase -= 2 * .pi }
            worst = max(worst, abs(out[0][n] - expected), abs(out[1][n] - expected))
        }
        XCTAssertEqual(worst, 0, "both channels carry the generator's samples")
    }
}
