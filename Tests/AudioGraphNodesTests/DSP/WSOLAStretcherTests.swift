// Tests of WSOLAStretcher on its own: its sizes per sample rate, the splice at a known offset, skipping input at high rates.
import AudioGraphCore
import Foundation
import XCTest
@testable import AudioGraphNodes

final class WSOLAStretcherTests: XCTestCase {
    /// Runs `x` (mono) through `s` at `rate`, fed in blocks of `feed` frames; returns `frames` frames.
    func run(_ s: WSOLAStretcher, _ x: [Float], rate: Double, feed: Int, frames: Int) -> [Float] {
        let out = ChannelBufferStorage(channelCount: 1, capacity: s.hop)
        var y: [Float] = []
        var fed = 0
        s.prime()
        x.withUnsafeBufferPointer { x in
            while y.count < frames {
                s.setRate(rate)
                while !s.hasInputForNextSegment {
                    var p = x.baseAddress! + fed
                    withUnsafePointer(to: &p) { table in
                        table.withMemoryRebound(to: UnsafePointer<Float>.self, capacity: 1) { s.feed($0, frameCount: feed) }
                    }
                    fed += feed
                }
                s.makeSegment()
                let n = s.level
                s.read(into: out.list, frameCount: n)
                y += UnsafeBufferPointer(start: out.list.channel(0), count: n)
            }
        }
        return Array(y.prefix(frames))
    }

    /// 80 ms segments, 15 ms cross-fades (a multiple of 16 frames), ±8 ms of search.
    func testSizesFollowTheSampleRate() {
        let a = WSOLAStretcher(sampleRate: 48000, channelCount: 2, maximumOutputPerRead: 512, maximumFeed: 256)
        XCTAssertEqual([a.segment, a.overlap, a.hop, a.search], [3840, 720, 3120, 384])
        let b = WSOLAStretcher(sampleRate: 44100, channelCount: 1, maximumOutputPerRead: 512, maximumFeed: 256)
        XCTAssertEqual([b.segment, b.overlap, b.hop, b.search], [3528, 656, 2872, 353])
    }

    /// Segment 0 is the input's first `hop` frames; segment 1 at rate 2 starts where the
    /// input's waveform matches segment 0's end best. With a ramp (x[n] = n, no two windows
    /// alike in level) the least squared difference is at the end's own place, `hop`; the
    /// search can reach it only if it lies within ±search of the nominal start (`hop · 2 +
    /// segment/2 · (2 - 1)` = 8160): it does not, so the segment starts at the window's
    /// lowest frame, 8160 - 384 = 7776, and the output jumps there after the cross-fade.
    func testSegmentsStartAtTheirNominalPlaceOrTheBestMatchWithinTheSearch() {
        let s = WSOLAStretcher(sampleRate: 48000, channelCount: 1, maximumOutputPerRead: 3120, maximumFeed: 100)
        let x = (0..<40000).map { Float($0) / 40000 }
        let y = run(s, x, rate: 2, feed: 100, frames: 2 * s.hop)
        XCTAssertEqual(Array(y[0..<s.hop]), Array(x[0..<s.hop]))
        let start = 2 * s.hop + s.segment / 2 - s.search
        XCTAssertEqual(Array(y[(s.hop + s.overlap)..<(2 * s.hop)]), Array(x[(start + s.overlap)..<(start + s.hop)]))
    }

    /// At rate 32 whole feeds are skipped: segment 1 of a ramp comes from near its nominal start.
    func testHighRatesSkipInput() {
        let s = WSOLAStretcher(sampleRate: 48000, channelCount: 1, maximumOutputPerRead: 3120, maximumFeed: 256)
        let x = (0..<300_000).map { Float($0) / 300_000 }
        let y = run(s, x, rate: 32, feed: 256, frames: 2 * s.hop)
        let nominal = 32 * s.hop + s.segment / 2 * 31
        let got = Int((y[s.hop + s.overlap] * 300_000).rounded()) - s.overlap
        XCTAssertEqual(got, nominal - s.search)
    }
}
