// Tests of several receivers on one bus: taps with their own buffer sizes and formats, and recorders beside them.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

final class AudioEngineTapsTests: XCTestCase {
    final class Collected: @unchecked Sendable {
        let lock = NSLock()
        var left: [Float] = []
        var sizes: [Int] = []
        var interleaved: [Bool] = []
        func add(_ buffer: AudioPCMBuffer) {
            lock.lock()
            defer { lock.unlock() }
            let n = Int(buffer.frameLength)
            sizes.append(n)
            interleaved.append(buffer.format.isInterleaved)
            if buffer.format.isInterleaved {
                let p = buffer.floatChannelData![0]
                left += (0..<n).map { p[2 * $0] }
            } else {
                left += UnsafeBufferPointer(start: buffer.floatChannelData![0], count: n)
            }
        }
    }

    /// Three taps on the main mixer's bus (100 frames, 4800 frames interleaved, the slice) and a
    /// recorder on the same bus each get every frame rendered, bit for bit, in their own sizes;
    /// `removeTap(onBus:)` removes the application's taps and leaves the recorder recording.
    func testSeveralTapsAndARecorderOnOneBusEachGetEveryFrame() throws {
        let engine = try makeManualEngine(maximum: 1000)
        let source = makeSineSource(frequency: 440)
        engine.attach(source)
        engine.connect(source, to: engine.mainMixerNode, format: nil)
        let small = Collected(), large = Collected(), slice = Collected()
        let interleaved = AudioFormat(commonFormat: .pcmFormatFloat32, sampleRate: 48000, channels: 2, interleaved: true)!
        engine.mainMixerNode.installTap(onBus: 0, bufferSize: 100, format: nil) { b, _ in small.add(b) }
        engine.mainMixerNode.installTap(onBus: 0, bufferSize: 4800, format: interleaved) { b, _ in large.add(b) }
        engine.mainMixerNode.installTap(onBus: 0, bufferSize: 0, format: nil) { b, _ in slice.add(b) }
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("taps-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("mix.wav")
        let recorder = AudioNodeRecorder(node: engine.mainMixerNode, url: url)
        try engine.start()
        try recorder.record()
        let rendered = try render(engine, frames: 9600, piece: 1000)[0]
        engine.mainMixerNode.removeTap(onBus: 0)
        XCTAssertTrue(recorder.isRecording)
        let after = try render(engine, frames: 1000, piece: 1000)[0]
        try recorder.stop()
        engine.stop()

        for (name, c, size) in [("100", small, 100), ("4800", large, 4800), ("slice", slice, 1000)] {
            c.lock.lock()
            defer { c.lock.unlock() }
            XCTAssertEqual(c.left, rendered, "tap \(name): not every frame, or not bit for bit")
            XCTAssertEqual(Array(c.sizes.dropLast()), Array(repeating: size, count: max(0, c.sizes.count - 1)), "tap \(name)")
        }
        XCTAssertEqual(large.interleaved.first, true, "the tap's own format")
        XCTAssertEqual(small.interleaved.first, false)
        XCTAssertEqual(recorder.droppedBufferCount, 0)
        let file = try AudioFile(forReading: url)
        XCTAssertEqual(file.length, 10_600, "the recorder kept recording after removeTap(onBus:)")
        let back = try XCTUnwrap(AudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: 10_600))
        try file.read(into: back)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: back.floatChannelData![0], count: 10_600)), rendered + after)
    }
}
