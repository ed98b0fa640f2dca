// The block types under Apple's names and annotations: non-Sendable state captured in each, in the Swift 6 language mode.
import AudioGraphKit
import Foundation
import XCTest

/// State that is deliberately not `Sendable` (as an app's view model or recorder is): every
/// block below captures one. Were any block type `@Sendable`, this file would not compile in
/// the Swift 6 language mode (the test target's), which is the point of these tests.
private final class Counter {
    var calls = 0
    var frames = 0
    var phase = 0.0
    var samples: [Float] = []
    var completions: [AudioPlayerNodeCompletionCallbackType] = []
}

final class AudioNodeBlocksTests: XCTestCase {

    /// The typealiases have Apple's shapes: a closure of each shape, capturing non-Sendable
    /// state, converts to them.
    func testTheTypealiasesTakeClosuresCapturingNonSendableState() {
        let counter = Counter()
        let tap: AudioNodeTapBlock = { buffer, _ in counter.frames += Int(buffer.frameLength) }
        let render: AudioSourceNodeRenderBlock = { isSilence, _, _, _ in
            isSilence.pointee = true
            counter.calls += 1
            return noErr
        }
        let receive: AudioSinkNodeReceiverBlock = { _, frames, _ in counter.frames += Int(frames); return noErr }
        let done: AudioNodeCompletionHandler = { counter.calls += 1 }
        let typed: AudioPlayerNodeCompletionHandler = { counter.completions.append($0) }
        let input: AudioConverterInputBlock = { _, status in status.pointee = .endOfStream; counter.calls += 1; return nil }
        done()
        typed(.dataRendered)
        XCTAssertEqual(counter.calls, 1)
        XCTAssertEqual(counter.completions, [.dataRendered])
        _ = (tap, render, receive, input)
    }

    /// A source block keeping its phase in a non-Sendable class renders the sine it computes;
    /// `isSilence` is an `ObjCBool` as on Apple's platforms, and setting it makes the slice
    /// silent. A sink block and a tap block, each with non-Sendable state, see the same samples.
    func testSourceSinkAndTapBlocksWithNonSendableState() throws {
        let engine = try makeManualEngine(format: AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!)
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 1)!
        let state = Counter()
        let source = AudioSourceNode(format: format) { isSilence, _, frameCount, data in
            let out = UnsafeMutableAudioBufferListPointer(data)[0].mData!.assumingMemoryBound(to: Float.self)
            state.calls += 1
            if state.calls == 3 {
                // The third slice says it is silent (its samples are then ignored).
                for i in 0..<Int(frameCount) { out[i] = 1 }
                isSilence.pointee = true
                return noErr
            }
            for i in 0..<Int(frameCount) {
                out[i] = Float(0.5 * sin(state.phase))
                state.phase += 2 * Double.pi * 1000 / 48000
            }
            return noErr
        }
        let received = Counter()
        let sink = AudioSinkNode { _, frames, data in
            let x = UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: data))[0].mData!.assumingMemoryBound(to: Float.self)
            received.samples.append(contentsOf: UnsafeBufferPointer(start: x, count: Int(frames)))
            return noErr
        }
        let tapped = Counter()
        engine.attach(source)
        engine.attach(sink)
        engine.connect(source, to: sink, format: format)
        source.installTap(onBus: 0, bufferSize: 512, format: nil) { buffer, _ in
            tapped.samples.append(contentsOf: UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength)))
        }
        try engine.start()
        _ = try render(engine, frames: 2048, piece: 512)
        engine.stop()
        XCTAssertEqual(received.samples.count, 2048)
        var phase = 0.0
        for n in 0..<2048 {
            let expected: Float
            if (1024..<1536).contains(n) {
                expected = 0
            } else {
                expected = Float(0.5 * sin(phase))
                phase += 2 * Double.pi * 1000 / 48000
            }
            XCTAssertEqual(received.samples[n], expected, "frame \(n)")
            if received.samples[n] != expected { break }
        }
        XCTAssertEqual(tapped.samples, received.samples)
    }

    /// Completion handlers capturing non-Sendable state run (on the notifier thread) after the
    /// buffer is consumed and rendered.
    func testPlayerCompletionHandlersWithNonSendableState() throws {
        let engine = try makeManualEngine()
        let player = AudioPlayerNode()
        engine.attach(player)
        let format = AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!
        engine.connect(player, to: engine.mainMixerNode, format: format)
        let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: 1000))
        buffer.frameLength = 1000
        let state = Counter()
        let done = expectation(description: "completions")
        done.expectedFulfillmentCount = 2
        player.scheduleBuffer(buffer) {
            state.calls += 1
            done.fulfill()
        }
        player.scheduleBuffer(buffer, completionCallbackType: .dataRendered) { type in
            state.completions.append(type)
            done.fulfill()
        }
        try engine.start()
        player.play()
        _ = try render(engine, frames: 4096, piece: 1024)
        wait(for: [done], timeout: 5)
        XCTAssertEqual(state.calls, 1)
        XCTAssertEqual(state.completions, [.dataRendered])
        engine.stop()
    }
}
