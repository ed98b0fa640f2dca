// Tests of ChannelStretchWorker: blocks handed to its thread come out as from a stretcher fed on the calling thread.
import AudioGraphCore
import Foundation
import XCTest
@testable import AudioGraphNodes

final class ChannelStretchWorkerTests: XCTestCase {
    func stretcher() -> TimePitchStretcher {
        TimePitchStretcher(sampleRate: 48000, channelCount: 1, overlap: 8, consistentPitch: false, maximumOutputPerRead: 4096,
                           rate: 1.25, cents: 0)
    }

    /// 200 blocks of a tone with clicks, at rates that change every 50 blocks, published in
    /// batches of up to 7 (waited for after each): the worker's stretcher (on its thread) gives
    /// the same samples as a stretcher fed directly, including a start-over (prime) at block 120.
    func testTheWorkersStretcherMatchesOneFedDirectly() {
        let direct = stretcher()
        let worker = ChannelStretchWorker(stretchers: [stretcher()], blockSize: 256, capacity: 16)
        XCTAssertTrue(worker.hasThread)
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { block.deallocate() }
        var table = UnsafePointer(block)
        var a: [Float] = [], b: [Float] = []
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 100_000)
        defer { out.deallocate() }
        func drain(_ s: TimePitchStretcher, into y: inout [Float]) {
            let n = s.level
            s.read(channel0Into: out, frameCount: n)
            y += UnsafeBufferPointer(start: out, count: n)
        }
        var i = 0
        while i < 200 {
            let batch = min(7, 200 - i)
            for j in i..<(i + batch) {
                for n in 0..<256 {
                    let t = j * 256 + n
                    block[n] = Float(0.3 * sin(Double(t) * 0.05)) + (t % 6000 < 30 ? 0.5 : 0)
                }
                let rate = [1.25, 0.7, 2, 1][j / 50]
                if j == 120 { direct.prime(rate: rate, cents: 0) }
                direct.setRatios(rate: rate, cents: 0)
                withUnsafePointer(to: &table) { direct.process($0, frameCount: 256) }
                worker.inputSlot(channel: 0).update(from: block, count: 256)
                worker.publish(rate: rate, cents: 0, prime: j == 120)
            }
            worker.waitForAll()
            drain(direct, into: &a)
            drain(worker.stretchers[0], into: &b)
            i += batch
        }
        XCTAssertGreaterThan(a.count, 40000)
        XCTAssertEqual(a, b)
    }
}
