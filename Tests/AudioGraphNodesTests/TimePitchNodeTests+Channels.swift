// Tests of TimePitchNode's offline file renders with `finer`: one mono stretcher per channel, channels 1… on a helper thread.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

extension TimePitchNodeTests {
    /// Channel `c` of the test signal: a tone (300 or 1000 Hz) with a click every 0.1 s.
    static func channelSignal(_ c: Int, _ n: Int64) -> Float {
        let tone = 0.3 * sin(2 * Double.pi * (c == 0 ? 300 : 1000) * Double(n) / 48000)
        return Float(tone + (n % 4800 < 48 ? 0.5 * exp(-Double(n % 4800) / 10) : 0))
    }

    func offlineFiner() throws -> TimePitchNode {
        let t = TimePitchNode(id: "tp", sampleRate: sr, quality: .finer, livePitchChanges: false)
        try t.setAutomation(try AutomationTimeline(events: [
            .setValue(value: 1.25, time: 0), .linearRamp(value: 0.8, time: 0.3)], defaultValue: 1.25), for: "rate")
        return t
    }

    /// An offline file render with `finer` stretches each channel on its own (channel 1 on the
    /// helper thread): channel c of a stereo render is, sample for sample, the mono render of
    /// channel c alone, with rate automation, in slices of 100 and of 4096 frames. Live nodes and the other
    /// qualities keep one stretcher for all channels.
    func testOfflineFinerStretchesEachChannelOnItsOwnBesideTheRenderThread() throws {
        let t = try offlineFiner()
        XCTAssertTrue(t.splitsChannels)
        // The helper runs where the graph renders on more than one thread (offline).
        let g = try startedGraph([formulaSource("st", channels: 2) { c, n in Self.channelSignal(c, n) }, t], "st -> tp -> out", slice: 100,
                                 configure: { try $0.setRenderThreadCount(2, startingWorkersWhenParallel: true) })
        let y = renderFrames(g, frames: 28800, channels: 2, slices: [100])
        let k = try XCTUnwrap(t.kernel as? TimePitchKernel)
        XCTAssertNotNil(k.channelHelper, "channel 1 has a helper thread")
        XCTAssertGreaterThan(SignalMeasurement.rms(y[1][4800...]), 0.15)
        // Slices of 4096 (16 pieces, channel 1 read once per slice) give the same samples.
        let v = try offlineFiner()
        let g2 = try startedGraph([formulaSource("st", channels: 2) { c, n in Self.channelSignal(c, n) }, v], "st -> tp -> out", slice: 4096)
        XCTAssertEqual(renderFrames(g2, frames: 28800, channels: 2, slices: [4096]), y)
        for c in 0..<2 {
            let u = try offlineFiner()
            let m = try startedGraph([formulaSource("m", channels: 1) { _, n in Self.channelSignal(c, n) }, u], "m -> tp -> out", slice: 100)
            XCTAssertEqual(y[c], renderFrames(m, frames: 28800, channels: 1, slices: [100])[0], "channel \(c)")
        }
        XCTAssertFalse(TimePitchNode(id: "tp", sampleRate: sr, quality: .finer).splitsChannels, "live")
        XCTAssertFalse(TimePitchNode(id: "tp", sampleRate: sr, quality: .faster, livePitchChanges: false).splitsChannels)
    }

    /// Where the system refuses the helper thread the render thread feeds channel 1 itself as
    /// it posts: the same samples as with the helper (which here runs every job), with rate
    /// automation and slices of 300 frames.
    func testWithoutItsHelperThreadTheRenderThreadStretchesChannelOneTheSame() throws {
        RenderHelperThread.testOnly_helperRunsEveryJob.store(true, ordering: .relaxed)
        defer { RenderHelperThread.testOnly_helperRunsEveryJob.store(false, ordering: .relaxed) }
        var renders: [[[Float]]] = []
        for withThread in [true, false] {
            let t = try offlineFiner()
            let g = try startedGraph([formulaSource("st", channels: 2) { c, n in Self.channelSignal(c, n) }, t], "st -> tp -> out", slice: 300,
                                     configure: { try $0.setRenderThreadCount(2, startingWorkersWhenParallel: true) })
            let k = try XCTUnwrap(t.kernel as? TimePitchKernel)
            XCTAssertNotNil(k.channelHelper, "two render threads: channel 1 has a helper thread")
            if !withThread { k.channelHelper = nil }
            renders.append(renderFrames(g, frames: 28800, channels: 2))
            XCTAssertEqual(k.channelHelper?.jobsRun ?? 0 > 100, withThread)
        }
        XCTAssertGreaterThan(SignalMeasurement.rms(renders[1][1][4800...]), 0.15)
        XCTAssertEqual(renders[0], renders[1])
    }

    /// Bypass on and off in an offline split render: the helper's stretcher starts over with
    /// channel 0's, so both channels come back alike when both carry the same signal.
    func testOfflineFinerChannelsStartOverTogetherAfterBypass() throws {
        let t = try offlineFiner()
        try t.setAutomation(try AutomationTimeline(events: [
            .setValue(value: 0, time: 0), .setValue(value: 1, time: 0.1), .setValue(value: 0, time: 0.2)],
            defaultValue: 0), for: "bypass")
        let g = try startedGraph([formulaSource("st", channels: 2) { _, n in Self.channelSignal(0, n) }, t], "st -> tp -> out", slice: 512)
        let y = renderFrames(g, frames: 24000, channels: 2)
        XCTAssertGreaterThan(SignalMeasurement.rms(y[0][14400...]), 0.15)
        XCTAssertEqual(y[0], y[1])
    }

    /// 200 blocks of a tone with clicks, at rates that change every 50 blocks, posted in
    /// batches of up to 7 (collected after each) to the helper thread, which runs every job
    /// (``RenderHelperThread/testOnly_helperRunsEveryJob``): the helper's stretcher gives the same
    /// samples as a stretcher fed directly on this thread, including a start-over (prime) at
    /// block 120. (Was ChannelStretchWorkerTests.)
    func testTheHelpersStretcherMatchesOneFedDirectly() throws {
        func stretcher() -> TimePitchStretcher {
            TimePitchStretcher(sampleRate: 48000, channelCount: 1, overlap: 8, consistentPitch: false, maximumOutputPerRead: 4096,
                               rate: 1.25, cents: 0)
        }
        RenderHelperThread.testOnly_helperRunsEveryJob.store(true, ordering: .relaxed)
        defer { RenderHelperThread.testOnly_helperRunsEveryJob.store(false, ordering: .relaxed) }
        let direct = stretcher()
        let channels = TimePitchKernel.HelperChannels(stretchers: [stretcher()], capacity: 16)
        let helper = try RenderHelperThread(name: "ag-test-timepitch", capacity: channels.capacity) { channels.feed($0) }
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
                let slot = j % channels.capacity
                channels.input(slot: slot, channel: 0).update(from: block, count: 256)
                channels.setRatios(slot: slot, rate: rate, cents: 0, prime: j == 120)
                helper.post(slot)
            }
            helper.collect()
            drain(direct, into: &a)
            drain(channels.stretchers[0], into: &b)
            i += batch
        }
        XCTAssertEqual(helper.jobsRun, 200, "the helper fed every block")
        XCTAssertGreaterThan(a.count, 40000)
        XCTAssertEqual(a, b)
    }
}
