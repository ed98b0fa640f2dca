// Voice processing live, on a private PulseAudio server: the input hears the output (the sink's monitor) plus a near end played by pacat; the echo goes by the measured ERLE, the near end stays; off, the capture is the output bit for bit.
@testable import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioInputNodeVoiceProcessingTests: DefaultPulseServerTestCase {
    static let rate = 48000

    final class Collected: @unchecked Sendable {
        let lock = NSLock()
        var left: [Float] = []
        var count: Int { lock.lock(); defer { lock.unlock() }; return left.count }
    }

    struct Take {
        var captured: [Float]
        var nearStart: Int
        var latency: TimeInterval
        var processor: (late: Int, lost: Int, failures: Int, frames: Int)?
    }

    /// One take: the engine plays `far` (both channels) to the test sink and captures the sink's
    /// monitor through a tap on the input node; once the tap has 5 s, pacat plays `near` into the
    /// same sink; 3 s later the take ends.
    func take(far: [Float], near: [Float], voiceProcessing: Bool) throws -> Take {
        let engine = AudioEngine()
        engine.inputNode.setDevice("\(server.sinkName).monitor")
        if voiceProcessing {
            try engine.inputNode.setVoiceProcessingEnabled(true)
            engine.inputNode.isVoiceProcessingAGCEnabled = false
        }
        final class Cursor: @unchecked Sendable { var frame = 0 }
        let cursor = Cursor()
        let source = AudioSourceNode(format: AudioFormat(standardFormatWithSampleRate: Double(Self.rate), channels: 2)!) { _, _, frameCount, data in
            let list = UnsafeMutableAudioBufferListPointer(data)
            for i in 0..<Int(frameCount) {
                let n = cursor.frame + i
                let v = n < far.count ? far[n] : 0
                for b in list { b.mData!.assumingMemoryBound(to: Float.self)[i] = v }
            }
            cursor.frame += Int(frameCount)
            return noErr
        }
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        let collected = Collected()
        engine.inputNode.installTap(onBus: 0, bufferSize: 4800, format: nil) { buffer, _ in
            collected.lock.lock()
            collected.left += UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength))
            collected.lock.unlock()
        }
        try engine.start()
        if voiceProcessing {
            XCTAssertThrowsError(try engine.outputNode.setVoiceProcessingEnabled(false)) { error in
                XCTAssertEqual((error as? AudioEngineError)?.code, -10863)
            }
        }
        let deadline = Date().addingTimeInterval(20)
        while collected.count < 5 * Self.rate && Date() < deadline { usleep(10_000) }
        let nearStart = collected.count
        let file = server.directory.appendingPathComponent("near.raw")
        let interleaved = near.flatMap { [$0, $0] }
        try interleaved.withUnsafeBytes { try Data($0).write(to: file) }
        let player = try server.startPlaying(file: file)
        while collected.count < nearStart + 3 * Self.rate && Date() < deadline { usleep(10_000) }
        let latency = engine.inputNode.voiceProcessingLatency
        let p = engine.inputNode.voiceProcessor.map { ($0.lateFrameCount, $0.lostFrameCount, $0.failureCount, $0.processedFrameCount) }
        engine.inputNode.removeTap(onBus: 0)
        engine.stop()
        server.stopChild(player)
        collected.lock.lock()
        defer { collected.lock.unlock() }
        return Take(captured: collected.left, nearStart: nearStart, latency: latency, processor: p)
    }

    /// Far end: 4.5 s of speech-like noise (VoiceProcessorTests' generator), then silence;
    /// near end: 3 s of voiced syllables. With voice processing (gain control off) the echo of
    /// the far end in the capture drops by at least 25 dB (ERLE, over 2.5-4 s) and the near end
    /// alone keeps its level within 3 dB (over 1.5 s: three whole syllable periods); without it
    /// the capture holds the played far end bit for bit.
    func testVoiceProcessingCancelsTheOutputsEchoAndKeepsTheNearEnd() throws {
        let r = Self.rate
        let far = VoiceProcessorTests.farEnd(count: 6 * r) { $0 >= 4.5 }
        let near = VoiceProcessorTests.nearEnd(count: 3 * r, start: 0)
        let farLevel = VoiceProcessorTests.level(far[(5 * r / 2)..<(4 * r)])
        let nearLevel = VoiceProcessorTests.level(near[(r / 2)..<(2 * r)])

        // A take that did not capture its 8 s (in 20 s) is a failure, never a trap in the slicing
        // below (a starved machine once left one under 4 s: the range of the lag search was
        // negative and the whole test process ended).
        func complete(_ t: Take, _ label: String) -> Bool {
            let needed = max(4 * r + 64, t.nearStart + 4 * r / 5 + 3 * r / 2)
            guard t.captured.count >= needed else {
                XCTFail("\(label): the take captured \(t.captured.count) frames, fewer than the \(needed) measured")
                return false
            }
            return true
        }
        let off = try take(far: far, near: near, voiceProcessing: false)
        guard complete(off, "voice processing off") else { return }
        XCTAssertNil(off.processor)
        XCTAssertEqual(off.latency, 0)
        // Off: the far end is in the capture, bit for bit, at some lag.
        let probe = Array(far[r..<(r + 64)])
        let lag = (0..<(off.captured.count - 4 * r)).first { i in Array(off.captured[(i + r)..<(i + r + 64)]) == probe }
        let offEcho = VoiceProcessorTests.level(off.captured[(5 * r / 2)..<(4 * r)])
        print("voice processing off: far end \(farLevel) dB, capture \(offEcho) dB, far end found at lag \(lag.map(String.init) ?? "none")")
        let lagFound = try XCTUnwrap(lag, "the played far end is not in the capture bit for bit")
        XCTAssertTrue(Array(off.captured[(lagFound + r / 2)..<(lagFound + 4 * r)]) == Array(far[(r / 2)..<(4 * r)]),
                      "the capture without voice processing differs from what was played")

        let on = try take(far: far, near: near, voiceProcessing: true)
        guard complete(on, "voice processing on") else { return }
        let residual = VoiceProcessorTests.level(on.captured[(5 * r / 2)..<(4 * r)])
        let erle = farLevel - residual
        let nearOut = VoiceProcessorTests.level(on.captured[(on.nearStart + 4 * r / 5)..<(on.nearStart + 4 * r / 5 + 3 * r / 2)])
        let nearOff = VoiceProcessorTests.level(off.captured[(off.nearStart + 4 * r / 5)..<(off.nearStart + 4 * r / 5 + 3 * r / 2)])
        print("voice processing on: ERLE \(erle) dB (echo \(farLevel) dB -> \(residual) dB); near end alone \(nearLevel) dB, "
              + "captured \(nearOff) dB off, \(nearOut) dB on; latency \(on.latency * 1000) ms; worker \(String(describing: on.processor))")
        XCTAssertGreaterThan(erle, 25)
        XCTAssertEqual(nearOff, nearLevel, accuracy: 1)
        // webrtc's noise suppression, having heard the loud echo, takes a few dB off the near end
        // for seconds (4 dB measured; offline, with an echo 8 dB down, 1 dB).
        XCTAssertEqual(nearOut, nearLevel - 3, accuracy: 3)
        XCTAssertEqual(on.latency, Double(2 * 480 + 512) / 48000, accuracy: 1e-9)
        let worker = try XCTUnwrap(on.processor)
        XCTAssertEqual(worker.failures, 0)
        XCTAssertGreaterThan(worker.frames, 700, "10 ms frames processed in 8 s")
    }
}
