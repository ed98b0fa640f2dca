// Tests of AnalyserNode rendered offline: pass-through, time-domain data, and the frequency data
// against numpy's FFT (scripts/reference/analyser_reference.py).
import AudioGraphCore
import Foundation
import Synchronization
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class AnalyserNodeTests: XCTestCase {
    /// A 1 kHz tone plus an integer LCG noise (every bin well above float rounding), per channel.
    static func signal(_ channel: Int, _ n: Int64) -> Float {
        var s = UInt64(12345 + 7 * channel)
        // The LCG state at n is costly to jump to; hash n instead (deterministic, white enough).
        s = (s &+ UInt64(bitPattern: n) &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(bitPattern: n) >> 7)
        s = (s ^ (s >> 31)) &* 0xBF58_476D_1CE4_E5B9
        s ^= s >> 29
        let noise = Double(s % 2_147_483_648) / 2_147_483_648 * 2 - 1
        let tone = (channel == 0 ? 0.5 : 0.3) * sin(2 * Double.pi * 1000 * Double(n) / 48000 + Double(channel))
        return Float(tone + 0.1 * noise)
    }

    /// The mean of the channels at frame n, computed as the analyser's contract says.
    static func mono(_ channels: Int, _ n: Int64) -> Float {
        if channels == 1 { return signal(0, n) }
        var sum = signal(0, n)
        for c in 1..<channels { sum += signal(c, n) }
        return sum * (1 / Float(channels))
    }

    func graph(_ analyser: AnalyserNode, channels: Int, slice: Int = 512) throws -> AudioGraph {
        let src = formulaSource("src", channels: channels) { c, n in Self.signal(c, n) }
        return try startedGraph([src, analyser], "src -> an -> out", slice: slice)
    }

    /// Runs the reference script on blocks of frames.
    func reference(tau: Double, blocks: [[Float]]) throws -> [Double] {
        try ReferenceScript.analyser(tau: tau, blocks: blocks, in: TestFiles.makeTemporaryDirectory(self))
    }

    func testPropertiesAreValidated() {
        XCTAssertThrowsError(try AnalyserNode(id: "a", properties: AnalyserProperties(fftSize: 1000)))
        XCTAssertThrowsError(try AnalyserNode(id: "a", properties: AnalyserProperties(fftSize: 16)))
        XCTAssertThrowsError(try AnalyserNode(id: "a", properties: AnalyserProperties(fftSize: 65536)))
        XCTAssertThrowsError(try AnalyserNode(id: "a", properties: AnalyserProperties(smoothingTimeConstant: 1.5)))
        XCTAssertThrowsError(try AnalyserNode(id: "a", properties: AnalyserProperties(minDecibels: -20, maxDecibels: -30)))
        XCTAssertEqual(try AnalyserNode(id: "a", properties: AnalyserProperties(fftSize: 32)).frequencyBinCount, 16)
        XCTAssertEqual(try AnalyserNode(id: "a", properties: AnalyserProperties(fftSize: 32768)).frequencyBinCount, 16384)
    }

    func testPassesAudioBitExactAndTimeDomainIsTheLastFrames() throws {
        let an = try AnalyserNode(id: "an", properties: AnalyserProperties(fftSize: 1024))
        let g = try graph(an, channels: 2, slice: 480)
        let y = renderFrames(g, frames: 5000, channels: 2, slices: [480, 17, 333])
        for c in 0..<2 {
            XCTAssertEqual(y[c], (0..<5000).map { Self.signal(c, Int64($0)) }, "channel \(c) changed")
        }
        var time = [Float](repeating: .nan, count: 1024)
        an.getFloatTimeDomainData(into: &time)
        XCTAssertEqual(time, (3976..<5000).map { Self.mono(2, Int64($0)) })
        let frames = (3976..<5000).map { Double(Self.mono(2, Int64($0))) }
        XCTAssertEqual(Double(an.rms), (frames.map { $0 * $0 }.reduce(0, +) / 1024).squareRoot(), accuracy: 1e-6)
        XCTAssertEqual(Double(an.peak), frames.map(abs).max()!, accuracy: 0)
        var bytes = [UInt8](repeating: 0, count: 1024)
        an.getByteTimeDomainData(into: &bytes)
        XCTAssertEqual(bytes, frames.map { UInt8(max(0, min(255, (128 * (1 + $0)).rounded(.down)))) })
    }

    func testBeforeRenderingTheDataIsSilence() throws {
        let an = try AnalyserNode(id: "an", properties: AnalyserProperties(fftSize: 64))
        var time = [Float](repeating: 1, count: 64)
        an.getFloatTimeDomainData(into: &time)
        XCTAssertEqual(time, [Float](repeating: 0, count: 64))
        var db = [Float](repeating: 0, count: 32)
        an.getFloatFrequencyData(into: &db)
        XCTAssertEqual(db, [Float](repeating: -.infinity, count: 32))
    }

    func testFrequencyDataMatchesNumpyWithin0_01dB() throws {
        let an = try AnalyserNode(id: "an", properties: AnalyserProperties(fftSize: 2048, smoothingTimeConstant: 0))
        let g = try graph(an, channels: 1)
        _ = renderFrames(g, frames: 6000, channels: 1)
        var db = [Float](repeating: .nan, count: 1024)
        an.getFloatFrequencyData(into: &db)
        let expected = try reference(tau: 0, blocks: [(3952..<6000).map { Self.mono(1, Int64($0)) }])
        XCTAssertEqual(expected.count, 1024)
        let worst = zip(db, expected).map { abs(Double($0) - $1) }.max()!
        XCTAssertLessThan(worst, 0.01)   // measured: 0.0002 dB
        // The tone's bin (1000 Hz at 48000/2048 Hz per bin: bin 42.67) is the loudest.
        XCTAssertEqual(db.indices.max(by: { db[$0] < db[$1] }), 43)
    }

    func testSmoothingOverTwoReadsMatchesTheFormula() throws {
        let an = try AnalyserNode(id: "an", properties: AnalyserProperties(fftSize: 256, smoothingTimeConstant: 0.8,
                                                                           minDecibels: -90, maxDecibels: -10))
        let g = try graph(an, channels: 2, slice: 128)
        _ = renderFrames(g, frames: 1280, channels: 2)
        var first = [Float](repeating: .nan, count: 128)
        an.getFloatFrequencyData(into: &first)
        var again = [Float](repeating: .nan, count: 128)
        an.getFloatFrequencyData(into: &again)
        XCTAssertEqual(first, again, "a second read with nothing rendered in between smoothed again")
        _ = renderFrames(g, frames: 640, channels: 2)
        var second = [Float](repeating: .nan, count: 128)
        an.getFloatFrequencyData(into: &second)
        let blocks = [(1024..<1280).map { Self.mono(2, Int64($0)) }, (1664..<1920).map { Self.mono(2, Int64($0)) }]
        let expected = try reference(tau: 0.8, blocks: blocks)
        XCTAssertLessThan(zip(second, expected).map { abs(Double($0) - $1) }.max()!, 0.01)
        let once = try reference(tau: 0.8, blocks: Array(blocks.prefix(1)))
        XCTAssertLessThan(zip(first, once).map { abs(Double($0) - $1) }.max()!, 0.01)

        // Bytes as the spec scales them, from the values just read (no new rendering: same data).
        var bytes = [UInt8](repeating: 0, count: 128)
        an.getByteFrequencyData(into: &bytes)
        XCTAssertEqual(bytes, expected.map { UInt8(max(0, min(255, (255 / 80 * ($0 + 90)).rounded(.down)))) })
    }

    /// The seqlock: while the graph renders on this thread as fast as it can (the writer
    /// overtaking the reader often), every snapshot another thread takes is fftSize consecutive
    /// frames of a counting signal, never a torn mix of old and new frames.
    func testSnapshotsTakenDuringRenderingAreConsecutiveFrames() throws {
        let an = try AnalyserNode(id: "an", properties: AnalyserProperties(fftSize: 4096))
        let src = formulaSource("src", channels: 1) { _, n in Float(n % 8_000_000 + 1) }
        let g = try startedGraph([src, an], "src -> an -> out", slice: 64)
        _ = renderFrames(g, frames: 8192, channels: 1)
        final class Result: @unchecked Sendable { var snapshots = 0; var torn = 0; var example = "" }
        let result = Result()
        let stop = Atomic<Bool>(false)
        let reader = Thread {
            var frames = [Float](repeating: 0, count: 4096)
            while !stop.load(ordering: .relaxed) {
                an.getFloatTimeDomainData(into: &frames)
                result.snapshots += 1
                for i in 1..<frames.count where frames[i] != frames[i - 1] + 1 {
                    result.torn += 1
                    if result.example.isEmpty { result.example = "frame \(i): \(frames[i - 1]) then \(frames[i])" }
                    break
                }
            }
        }
        reader.start()
        for _ in 0..<40_000 { _ = g.render(frameCount: 64) }
        stop.store(true, ordering: .relaxed)
        while !reader.isFinished { usleep(100) }
        XCTAssertGreaterThan(result.snapshots, 0)
        XCTAssertEqual(result.torn, 0, result.example)
    }

    func testSmoothingAndDecibelRangeSetAtRunTime() throws {
        let an = try AnalyserNode(id: "an", properties: AnalyserProperties(fftSize: 128))
        let g = try graph(an, channels: 1, slice: 128)
        _ = renderFrames(g, frames: 1024, channels: 1)
        var db = [Float](repeating: .nan, count: 64)
        an.getFloatFrequencyData(into: &db)   // smoothed with 0.8 from zero
        XCTAssertThrowsError(try an.setSmoothingTimeConstant(-0.1))
        XCTAssertThrowsError(try an.setDecibelRange(minDecibels: -10, maxDecibels: -10))
        try an.setSmoothingTimeConstant(0)
        try an.setDecibelRange(minDecibels: -60, maxDecibels: 0)
        XCTAssertEqual(an.properties, AnalyserProperties(fftSize: 128, smoothingTimeConstant: 0, minDecibels: -60, maxDecibels: 0))
        _ = renderFrames(g, frames: 256, channels: 1)
        an.getFloatFrequencyData(into: &db)   // τ = 0: the latest block alone
        let expected = try reference(tau: 0, blocks: [(1152..<1280).map { Self.mono(1, Int64($0)) }])
        XCTAssertLessThan(zip(db, expected).map { abs(Double($0) - $1) }.max()!, 0.01)
        var bytes = [UInt8](repeating: 0, count: 64)
        an.getByteFrequencyData(into: &bytes)
        XCTAssertEqual(bytes, db.map { UInt8(max(0, min(255, (255 / 60 * (Double($0) + 60)).rounded(.down)))) })
    }
}
