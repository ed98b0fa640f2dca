// Tests of TimePitchStretcher against librubberband's own numbers: alignment of an impulse, FIFO bookkeeping.
import AudioGraphCore
import CRubberBand
import Foundation
import XCTest
@testable import AudioGraphNodes

final class TimePitchStretcherTests: XCTestCase {
    /// Feeds `blocks` blocks (an impulse at frame `at` of the first), returns everything produced.
    func run(_ s: TimePitchStretcher, impulseAt at: Int, blocks: Int) -> [Float] {
        let block = ChannelBufferStorage(channelCount: 1, capacity: s.blockSize)
        var table = UnsafePointer(block.list.channel(0))
        let out = ChannelBufferStorage(channelCount: 1, capacity: s.fifoCapacity)
        var y: [Float] = []
        for b in 0..<blocks {
            block.list.channel(0).update(repeating: 0, count: s.blockSize)
            if b == 0 { block.list.channel(0)[at] = 1 }
            withUnsafePointer(to: &table) { s.process($0, frameCount: s.blockSize) }
            let n = s.level
            s.read(into: out.list, frameCount: n)
            y += UnsafeBufferPointer(start: out.list.channel(0), count: n)
        }
        return y
    }

    func testAnImpulseComesOutAtItsOwnFrameAtRateOne() {
        let s = TimePitchStretcher(sampleRate: 48000, channelCount: 1, overlap: 8, maximumOutputPerRead: 512, rate: 1, cents: 0)
        let y = run(s, impulseAt: 100, blocks: 40)
        XCTAssertGreaterThan(y.count, 4096)
        let peak = y.indices.max { abs(y[$0]) < abs(y[$1]) }!
        XCTAssertEqual(peak, 100, "aligned: the start delay and the resampler's extra history are discarded")
        XCTAssertEqual(Int(s.framesFed), 40 * s.blockSize)
        XCTAssertEqual(Int(s.framesProduced), y.count)
    }

    func testTheStartDelayIsRubberbandsAndTheFIFOHoldsASlowBlock() {
        let s = TimePitchStretcher(sampleRate: 48000, channelCount: 2, overlap: 8, maximumOutputPerRead: 4096,
                                   rate: 1.0 / 32, cents: 0)
        // What a fresh stretcher with the same options says (its own numbers, not ours).
        let options = Int32(bitPattern: TimePitchStretcher.options(quality: .finer, overlap: 8, consistentPitch: true))
        let fresh = rubberband_new(48000, 2, options, 32, 1)!
        defer { rubberband_delete(fresh) }
        XCTAssertEqual(s.startDelay, Int(rubberband_get_start_delay(fresh)))
        XCTAssertEqual(s.startPad, Int(rubberband_get_preferred_start_pad(fresh)))
        XCTAssertGreaterThanOrEqual(s.fifoCapacity, 4096 + 32 * s.blockSize * 2)
    }
}
