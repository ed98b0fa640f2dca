// Tests that live capture delivers from start() on, without holes: input taps and node recorders against a private PulseAudio server.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import Synchronization
import XCTest

/// Frame `n` of the numbered signal: `(n mod 2^20 + 1) / 2^21`, exact in float32 and never 0,
/// so a captured stretch tells which frames it holds and any gap or repeat shows.
func numberedSample(_ n: Int) -> Float { Float(n % (1 << 20) + 1) / Float(1 << 21) }

/// The frame number a captured numbered sample stands for (nil for silence or anything else).
func numberedFrame(_ value: Float) -> Int? {
    let scaled = value * Float(1 << 21)
    guard scaled >= 1, scaled == scaled.rounded() else { return nil }
    return Int(scaled) - 1
}

/// Holes in a capture of the numbered signal: from its first numbered frame to its last, every
/// place where the next frame is not the one after (a gap, silence, a repeat).
func numberedHoles(_ samples: [Float]) -> (holes: Int, firstFrame: Int?, frames: Int) {
    guard let start = samples.firstIndex(where: { numberedFrame($0) != nil }),
          let end = samples.lastIndex(where: { numberedFrame($0) != nil }) else { return (0, nil, 0) }
    var holes = 0
    var i = start
    while i < end {
        if numberedFrame(samples[i + 1]) != numberedFrame(samples[i])! + 1 {
            holes += 1
            // Skip to the next numbered frame.
            i += 1
            while i < end && numberedFrame(samples[i]) == nil { i += 1 }
        } else {
            i += 1
        }
    }
    return (holes, numberedFrame(samples[start]), end - start + 1)
}

final class AudioEngineCaptureTests: DefaultPulseServerTestCase {
    /// Loads a second null sink `src` (float32, 48 kHz stereo, no rewinds) and plays `seconds` of
    /// the numbered signal into it with `pacat`; its monitor `src.monitor` is the capture source.
    func playNumberedSignal(seconds: Double) throws -> ChildProcess {
        try server.run("pactl", ["load-module", "module-null-sink", "sink_name=src", "format=float32le", "rate=48000",
                                 "channels=2", "norewinds=1"])
        let file = server.directory.appendingPathComponent("numbered.raw")
        let frames = Int(seconds * 48000)
        var wave = [Float](repeating: 0, count: 2 * frames)
        for n in 0..<frames { wave[2 * n] = numberedSample(n); wave[2 * n + 1] = numberedSample(n) }
        try wave.withUnsafeBytes { try Data($0).write(to: file) }
        let player = try server.startPlaying(file: file, sink: "src")
        usleep(400_000)
        return player
    }

    /// An input tap delivers its first buffer within the input latency + one buffer + 20 ms of
    /// `start()`, and from then on every frame played into the source, contiguous, with no hole
    /// and nothing dropped; three engines in a row.
    func testAnInputTapGetsItsFirstBufferAtOnceAndNoHoles() throws {
        let player = try playNumberedSignal(seconds: 20)
        defer { server.stopChild(player) }
        for run in 0..<3 {
            let engine = AudioEngine()
            engine.inputNode.setDevice("src.monitor")
            final class Collected: @unchecked Sendable {
                let lock = NSLock()
                var left: [Float] = []
                var firstHost: UInt64 = 0
            }
            let collected = Collected()
            let bufferSize = 4800
            engine.inputNode.installTap(onBus: 0, bufferSize: AudioFrameCount(bufferSize), format: nil) { buffer, _ in
                let now = AudioTime.currentHostTime
                collected.lock.lock()
                if collected.firstHost == 0 { collected.firstHost = now }
                collected.left += UnsafeBufferPointer(start: buffer.floatChannelData![0], count: Int(buffer.frameLength))
                collected.lock.unlock()
            }
            let startedAt = AudioTime.currentHostTime
            try engine.start()
            usleep(2_000_000)
            let latency = engine.inputNode.presentationLatency
            let dropped = engine.inputNode.droppedTapBufferCount(onBus: 0)
            engine.inputNode.removeTap(onBus: 0)
            engine.stop()
            collected.lock.lock()
            defer { collected.lock.unlock() }
            XCTAssertNotEqual(collected.firstHost, 0, "run \(run): no buffer")
            let first = Double(Int64(collected.firstHost) - Int64(startedAt)) / 1e9
            let (holes, _, frames) = numberedHoles(collected.left)
            let leading = collected.left.firstIndex { numberedFrame($0) != nil } ?? -1
            print(String(format: "capture run %d: first tap buffer %.1f ms after start() (input latency %.1f ms); "
                         + "%d frames captured, %d leading silent, %d contiguous, %d holes, %d dropped", run, first * 1000,
                         latency * 1000, collected.left.count, leading, frames, holes, dropped))
            XCTAssertLessThanOrEqual(first, 0.020 + Double(bufferSize) / 48000 + max(latency, 0.020), "run \(run)")
            XCTAssertEqual(holes, 0, "run \(run): holes in the capture")
            // Before the first captured frame only silence: the output's start-up burst and the
            // time until the first fragment and the margin had arrived (about 40-60 ms here).
            XCTAssertLessThanOrEqual(leading, 4800, "run \(run): leading silence")
            XCTAssertEqual(dropped, 0, "run \(run)")
        }
    }
}
