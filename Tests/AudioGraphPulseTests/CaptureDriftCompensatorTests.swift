// The full-duplex drift compensator: exact at one clock, a faithful resampler across two, a stable controller, real-time safe.
@testable import AudioGraphPulse
import AudioGraphRealtime
import AudioGraphTesting
import Foundation
import XCTest

final class CaptureDriftCompensatorTests: XCTestCase {
    private let rate = 48000

    /// Interleaved stereo frames `n ..< n + count` of a sine (left) and its negative (right).
    private func sine(_ frequency: Double, amplitude: Double, from n: Int, count: Int) -> [Float] {
        var out = [Float](repeating: 0, count: 2 * count)
        for i in 0..<count {
            let s = Float(amplitude * sin(2 * Double.pi * frequency * Double(n + i) / Double(rate)))
            out[2 * i] = s
            out[2 * i + 1] = -s
        }
        return out
    }

    /// Reads `frames` frames into two fresh channel buffers.
    private func read(_ drift: CaptureDriftCompensator, _ ring: RingBuffer, frames: Int) -> (left: [Float], right: [Float], complete: Bool) {
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
        defer { buffers.forEach { $0.deallocate() } }
        let complete = buffers.withUnsafeBufferPointer { drift.read(from: ring, frames: frames, into: $0.baseAddress!) }
        return (Array(UnsafeBufferPointer(start: buffers[0], count: frames)),
                Array(UnsafeBufferPointer(start: buffers[1], count: frames)), complete)
    }

    /// At step 1 (no drift seen) the output is the input, bit for bit, two frames later.
    func testWithoutDriftTheOutputIsTheInputTwoFramesLater() {
        let drift = CaptureDriftCompensator(channels: 2, maximumFrames: 256, sampleRate: rate)
        let ring = RingBuffer(capacity: 2 * 8192)
        let input = (0..<(2 * 4000)).map { _ in Float.random(in: -1...1) }
        input.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, count: $0.count) }
        var left: [Float] = []
        for size in [32, 7, 256, 1, 100, 32, 32] + Array(repeating: 64, count: 40) {
            let r = read(drift, ring, frames: size)
            XCTAssertTrue(r.complete)
            left += r.left
        }
        XCTAssertEqual(drift.step, 1)
        XCTAssertEqual(Array(left.prefix(2)), [0, 0])
        let expected = stride(from: 0, to: input.count, by: 2).map { input[$0] }
        XCTAssertEqual(Array(left.dropFirst(2)), Array(expected.prefix(left.count - 2)))
    }

    /// Steered off 1 (here by a large error: the level falls from 48000 frames to 0, and the
    /// step is clamped at 1 − 0.3 %), the output is the
    /// input resampled: output frame j is the sine at input position j × step − 2, within the
    /// cubic's error (1 kHz: below 2.5e-5 at a 0.5 amplitude; 300 Hz: below 1e-6).
    func testASteeredStepResamplesASineFaithfully() {
        for (frequency, bound) in [(1000.0, 2.5e-5), (300.0, 1e-6)] {
            let drift = CaptureDriftCompensator(channels: 2, maximumFrames: 256, sampleRate: rate)
            drift.reset()
            for _ in 0..<4 { drift.steer(lowWater: rate, deadband: 60) }  // the level: 48000
            XCTAssertEqual(drift.step, 1)
            for _ in 0..<4 { drift.steer(lowWater: 0, deadband: 60) }  // a second later: far below
            XCTAssertEqual(drift.step, 1 - CaptureDriftCompensator.maximumCorrection, accuracy: 1e-12)
            XCTAssertEqual(drift.correctionPartsPerMillion, -3000)
            let ring = RingBuffer(capacity: 2 * 16384)
            let input = sine(frequency, amplitude: 0.5, from: 0, count: 12000)
            input.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, count: $0.count) }
            var out: [Float] = [], right: [Float] = []
            for _ in 0..<40 {
                let r = read(drift, ring, frames: 256)
                out += r.left
                right += r.right
            }
            var worst = 0.0
            for j in 4..<out.count {
                let position = Double(j) * drift.step - 2
                let expected = 0.5 * sin(2 * Double.pi * frequency * position / Double(rate))
                worst = max(worst, abs(Double(out[j]) - expected))
                XCTAssertEqual(right[j], -out[j])
            }
            print(String(format: "%.0f Hz at step %.4f: worst error %.2e", frequency, drift.step, worst))
            XCTAssertLessThan(worst, bound, "\(frequency) Hz")
            // 10240 output frames took 10240 × step input frames (plus the 4-frame look-ahead).
            XCTAssertEqual(12000 - ring.readableCount / 2, Int((10240 * drift.step).rounded(.down)) + 1, accuracy: 2)
        }
    }

    /// The loop as the capture stream runs it: a source delivering 240-frame fragments every
    /// 5 ms of its clock, an output reading 32-frame quanta at its own (here 400 ppm faster, or
    /// 400 ppm slower, or the same) clock, the ring's low-water fill per quarter second steered
    /// back to its level of the first second (about 480 frames) with a 60-frame deadband; every 2 s a fragment comes 8 ms
    /// late (a dip of the low water that is not drift). For 120 s: no underrun, the low
    /// water within 160 frames of the target after the first 10 s (windows without a late
    /// fragment), and the step following the
    /// drift; on one clock the step stays exactly 1. Without steering the faster output runs the
    /// ring dry after about 25 s.
    func testSteeringFollowsADriftingOutputClockWithoutUnderruns() {
        for (drift, steered) in [(400.0, true), (-400.0, true), (0.0, true), (400.0, false)] {
            let compensator = CaptureDriftCompensator(channels: 2, maximumFrames: 32, sampleRate: rate)
            compensator.reset()
            let ring = RingBuffer(capacity: 2 * 8192)
            let fragment = sine(300, amplitude: 0.5, from: 0, count: 240)
            let target = 480
            // 752 frames at the start: the low water after a read (the fill just before a
            // fragment) is then the 480-frame margin, as the warm-up leaves it.
            for _ in 0..<3 { fragment.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, count: $0.count) } }
            fragment.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, count: 2 * 32) }
            var sourceTime = 0.015, outputTime = 0.0
            let quantum = 32.0 / (Double(rate) * (1 + drift * 1e-6))
            let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 32) }
            defer { buffers.forEach { $0.deallocate() } }
            var underruns = 0, windowRead = 0, lowest = Int.max, worstAfterSettling = 0
            while outputTime < 120 {
                // Fragments whose time has come arrive before the read (the output leads by 10 ms).
                // Every 2 s one fragment comes 8 ms late (the server's main thread held off).
                while sourceTime + (Int(sourceTime * 1000) % 2000 < 5 ? 0.008 : 0) <= outputTime + 0.010 {
                    fragment.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, count: $0.count) }
                    sourceTime += 240.0 / Double(rate)
                }
                let waiting = ring.readableCount / 2
                lowest = min(lowest, waiting)
                windowRead += 32
                if windowRead >= rate / 4 {
                    if steered { compensator.steer(lowWater: lowest - 32, deadband: 60) }
                    // (Leaving out the windows around a late fragment, at each even second.)
                    let lateInWindow = Int((outputTime + 0.02) / 2) != Int((outputTime - 0.27) / 2)
                    if outputTime > 10 && !lateInWindow { worstAfterSettling = max(worstAfterSettling, abs(lowest - 32 - target)) }
                    windowRead = 0
                    lowest = .max
                }
                if !buffers.withUnsafeBufferPointer({ compensator.read(from: ring, frames: 32, into: $0.baseAddress!) }) {
                    underruns += 1
                }
                outputTime += quantum
            }
            let label = "output clock \(drift) ppm, steered \(steered)"
            print("\(label): underruns \(underruns), low water within \(worstAfterSettling) frames of the target after 10 s, "
                  + "correction \(compensator.correctionPartsPerMillion) ppm")
            if steered {
                XCTAssertEqual(underruns, 0, label)
                XCTAssertLessThanOrEqual(worstAfterSettling, 160, label)
                if drift == 0 {
                    XCTAssertEqual(compensator.step, 1, label)
                } else {
                    XCTAssertEqual(Double(compensator.correctionPartsPerMillion), -drift, accuracy: 150, label)
                }
            } else {
                XCTAssertGreaterThan(underruns, 0, "the faster output drains an unsteered ring: \(label)")
            }
        }
    }

    /// Reads and steering make no allocation, free or lock.
    func testReadAndSteerAreRealTimeSafe() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        let drift = CaptureDriftCompensator(channels: 2, maximumFrames: 256, sampleRate: rate)
        let ring = RingBuffer(capacity: 2 * 65536)
        let input = sine(440, amplitude: 0.5, from: 0, count: 30000)
        input.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, count: $0.count) }
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 256) }
        defer { buffers.forEach { $0.deallocate() } }
        let counts = buffers.withUnsafeBufferPointer { pointers in
            RealTimeScaffold.count {
                drift.reset()
                for round in 0..<100 {
                    drift.steer(lowWater: round < 4 ? 480 : round % 2 == 0 ? 180 : 680, deadband: 60)
                    _ = drift.read(from: ring, frames: 256, into: pointers.baseAddress!)
                }
            }.counts
        }
        XCTAssertNil(counts.violation)
    }
}
