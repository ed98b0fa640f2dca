// Tests of PulseCaptureStream against a real private PulseAudio daemon (pacat plays, we record the monitor).
import AudioGraphPulse
import AudioGraphTesting
import Foundation
import XCTest

final class PulseCaptureStreamTests: PulseServerTestCase {
    /// Reads slices of `slice` frames whenever that many are waiting, for `seconds`, like a render
    /// thread would; returns the interleaved frames and how many slices were read.
    private func capture(_ stream: PulseCaptureStream, seconds: Double, slice: Int = 512) -> (left: [Float], right: [Float]) {
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: slice) }
        defer { buffers.forEach { $0.deallocate() } }
        var left: [Float] = [], right: [Float] = []
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            while stream.readableFrames >= slice {
                buffers.withUnsafeBufferPointer { pointers in
                    _ = stream.read(frameCount: slice, into: pointers.baseAddress!)
                }
                left.append(contentsOf: UnsafeBufferPointer(start: buffers[0], count: slice))
                right.append(contentsOf: UnsafeBufferPointer(start: buffers[1], count: slice))
            }
            usleep(2_000)
        }
        return (left, right)
    }

    /// pacat plays a 440 Hz tone (0.4 left, 0.2 right) into the null sink; we capture its monitor
    /// and measure frequency and level by a least-squares fit, and compare the samples with the
    /// file that was played.
    func testCapturesToneFromMonitor() throws {
        let seconds = 2.0
        let count = Int(seconds * 48000)
        var interleaved = [Float](repeating: 0, count: 2 * count)
        for n in 0..<count {
            let s = sin(2 * Double.pi * 440 * Double(n) / 48000 + 0.7)
            interleaved[2 * n] = Float(0.4 * s)
            interleaved[2 * n + 1] = Float(0.2 * s)
        }
        let file = server.directory.appendingPathComponent("tone.raw")
        try interleaved.withUnsafeBytes { try Data($0).write(to: file) }

        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let stream = try PulseCaptureStream(context: context, configuration: PulseStreamConfiguration(
            device: server.monitorSourceName, latencyMilliseconds: 40, maximumFramesPerSlice: 512))
        try stream.start()
        stream.setBacklogLimit(frames: 19_200)  // a stalled (non-real-time) test reader must not look like drift
        let attributes = stream.bufferAttributes
        let player = try server.startPlaying(file: file)
        let captured = capture(stream, seconds: seconds + 0.8)
        let latency = stream.latency()
        stream.stop()
        server.stopChild(player)

        guard let first = captured.left.firstIndex(where: { $0 != 0 }) else {
            return XCTFail("captured only silence (\(captured.left.count) frames)")
        }
        // Bit-identical comparison with the played file from the first sound on.
        var matching = 0
        while first + matching < captured.left.count, matching < count,
              captured.left[first + matching] == interleaved[2 * matching],
              captured.right[first + matching] == interleaved[2 * matching + 1] {
            matching += 1
        }
        let window = Array(captured.left[(first + 24000)..<(first + 72000)])
        let fit = try XCTUnwrap(ToneFit(dominantToneOf: window, sampleRate: 48000))
        let rightFit = try XCTUnwrap(ToneFit(dominantToneOf: Array(captured.right[(first + 24000)..<(first + 72000)]), sampleRate: 48000))
        print(String(format: "capture: fragsize %d frames, latency %.2f ms server + %.2f ms ring; first sound at %d, %d of %d frames bit-identical; fit L %.6f Hz %.7f (%.3f dBFS), R %.6f Hz %.7f; overruns %d, underruns %d, dropped %d",
                     attributes?.fragmentSize ?? -1, (latency?.server ?? -1) * 1000, (latency?.ring ?? -1) * 1000,
                     first, matching, count, fit.tones[0].frequency, fit.tones[0].amplitude, 20 * log10(fit.tones[0].amplitude),
                     rightFit.tones[0].frequency, rightFit.tones[0].amplitude, stream.overrunCount, stream.underrunCount, stream.droppedFrames))
        XCTAssertEqual(fit.tones[0].frequency, 440, accuracy: 0.001)
        XCTAssertEqual(fit.tones[0].amplitude, 0.4, accuracy: 1e-5)
        XCTAssertEqual(rightFit.tones[0].frequency, 440, accuracy: 0.001)
        XCTAssertEqual(rightFit.tones[0].amplitude, 0.2, accuracy: 1e-5)
        XCTAssertEqual(matching, count, "the captured tone differs from the played file at frame \(matching)")
        XCTAssertEqual(stream.overrunCount, 0)
        XCTAssertEqual(stream.droppedFrames, 0)
        if let fragment = attributes?.fragmentSize {
            XCTAssertLessThanOrEqual(fragment, 1920, "fragsize above the 40 ms asked for")
        }
    }

    /// Reading more than has arrived yields silence for the rest and counts an underrun; a reader
    /// that stops reading makes the ring overrun, counted too.
    func testUnderrunAndOverrunAreCounted() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let stream = try PulseCaptureStream(context: context, configuration: PulseStreamConfiguration(
            device: server.monitorSourceName, latencyMilliseconds: 10, maximumFramesPerSlice: 128))
        try stream.start()
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 128) }
        defer { buffers.forEach { $0.deallocate() } }
        buffers.forEach { $0.initialize(repeating: 1, count: 128) }
        // Immediately after start nothing (or little) has arrived: drain, then ask for more.
        while stream.readableFrames > 0 {
            buffers.withUnsafeBufferPointer { _ = stream.read(frameCount: 128, into: $0.baseAddress!) }
        }
        let got = buffers.withUnsafeBufferPointer { stream.read(frameCount: 128, into: $0.baseAddress!) }
        XCTAssertLessThan(got, 128)
        XCTAssertTrue((got..<128).allSatisfy { buffers[0][$0] == 0 && buffers[1][$0] == 0 }, "the missing part is silence")
        XCTAssertGreaterThanOrEqual(stream.underrunCount, 1)
        // Not reading for longer than the ring holds overflows it.
        let holds = Double(stream.capacityFrames) / 48000
        usleep(UInt32((holds + 0.4) * 1e6))
        print("capture counters: underruns \(stream.underrunCount), overruns \(stream.overrunCount)")
        XCTAssertGreaterThanOrEqual(stream.overrunCount, 1)
        // The next read drops the backlog beyond latency + two slices (480 + 256 frames) first.
        let before = stream.readableFrames
        buffers.withUnsafeBufferPointer { _ = stream.read(frameCount: 128, into: $0.baseAddress!) }
        print("capture backlog: \(before) frames waiting, dropped \(stream.droppedFrames), \(stream.readableFrames) left")
        XCTAssertGreaterThanOrEqual(stream.droppedFrames, before - 736 - 1024)
        XCTAssertLessThanOrEqual(stream.readableFrames, 736 - 128 + 1024)
        stream.stop()
        stream.stop()
    }

    func testUnknownSourceIsDeviceNotFound() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let stream = try PulseCaptureStream(context: context, configuration: PulseStreamConfiguration(device: "no-such-source"))
        XCTAssertThrowsError(try stream.start()) { error in
            XCTAssertEqual(error as? PulseError, .deviceNotFound(name: "no-such-source"))
        }
    }

    func testServerKilledWhileCapturingIsDetected() throws {
        let context = try PulseContext(server: server.serverString)
        defer { context.close() }
        let stream = try PulseCaptureStream(context: context, configuration: PulseStreamConfiguration(device: server.monitorSourceName))
        try stream.start()
        usleep(200_000)
        let detection = killServerAndWait { stream.fault }
        XCTAssertLessThan(detection, 1.0)
        guard case .connectionLost = stream.fault else { return XCTFail("got \(String(describing: stream.fault))") }
        stream.stop()
    }
}
