// Tests of eq chains fused into one cascade (EQChain): the same bits as the eqs rendered one by one, and which chains fuse.
@testable import AudioGraphCore
import Foundation
import AudioGraphTesting
import Synchronization
import XCTest
@testable import AudioGraphNodes

final class EQChainTests: XCTestCase {
    let sr = 48000.0

    /// Seeded noise, amplitude 0.4, different per channel; silent (and flagged so) in whole
    /// slices inside `silence`, with one NaN at frame `nanFrame` of channel 0 (if any).
    func noiseSource(_ id: String, channels: Int, silence: Range<Int64> = 0..<0, nanFrame: Int64 = -1) -> RenderCallbackNode {
        RenderCallbackNode(id: id, channels: channels) { context, buffer in
            let start = context.sampleTime, end = start + Int64(context.frameCount)
            if silence.contains(start) && silence.contains(end - 1) {
                buffer.clear(frameCount: context.frameCount)
                return true
            }
            for c in 0..<buffer.channelCount {
                let p = buffer.channel(c)
                for i in 0..<context.frameCount {
                    let n = start + Int64(i)
                    var x = UInt64(bitPattern: n) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(c + 1) &* 0xBF58_476D_1CE4_E5B9
                    x ^= x >> 31
                    x = x &* 0x94D0_49BB_1331_11EB
                    x ^= x >> 29
                    p[i] = silence.contains(n) ? 0 : Float(Double(x >> 11) / Double(1 << 53) - 0.5) * 0.8
                    if c == 0 && n == nanFrame { p[i] = .nan }
                }
            }
            return false
        }
    }

    /// Whether two renders are the same bit for bit (NaNs count as equal: NaN in the same places).
    func assertSameBits(_ a: [[Float]], _ b: [[Float]], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, what, file: file, line: line)
        for c in 0..<min(a.count, b.count) {
            XCTAssertEqual(a[c].count, b[c].count, what, file: file, line: line)
            let first = a[c].indices.first { i in i < b[c].count && !(a[c][i].bitPattern == b[c][i].bitPattern || (a[c][i].isNaN && b[c][i].isNaN)) }
            XCTAssertNil(first, "\(what): channel \(c) differs from frame \(first ?? -1): "
                         + "\(first.map { a[c][$0] } ?? 0) against \(first.map { b[c][$0] } ?? 0)", file: file, line: line)
        }
    }

    /// Five eqs in series (1, 3, 1 un-smoothed, 0 and 2 bands; the last with a global gain).
    func makeChain() -> [EQNode] {
        var unsmoothed = EQProperties(bands: [EQBand(type: .lowShelf, frequency: 300, gain: 4, q: 0.7)])
        unsmoothed.smoothing = false
        let eqs = [
            EQNode(id: "e0", sampleRate: sr, properties: EQProperties(bands: [EQBand(type: .peak, frequency: 700, gain: -5, q: 2)])),
            EQNode(id: "e1", sampleRate: sr, properties: EQProperties(bands: [
                EQBand(type: .highPass, frequency: 60), EQBand(type: .peak, frequency: 2500, gain: 6, q: 1.2),
                EQBand(type: .bandPass, frequency: 5000, q: 0.5)])),
            EQNode(id: "e2", sampleRate: sr, properties: unsmoothed),
            EQNode(id: "e3", sampleRate: sr, properties: EQProperties(bands: [])),
            EQNode(id: "e4", sampleRate: sr, properties: EQProperties(bands: [
                EQBand(type: .lowPass, frequency: 12000), EQBand(type: .notch, frequency: 3000, q: 4)])),
        ]
        try? eqs[4].setParameter("globalGain", -2)
        return eqs
    }

    /// Renders src -> e0 ... e4 -> out, fused or not, in slices of `slices` (cycled), applying
    /// `events[f]` before the first slice that starts at frame f or later; returns the output, the
    /// slices the chain ran as one cascade and all slices.
    func renderChain(fused: Bool, channels: Int, frames: Int, slices: [Int], silence: Range<Int64> = 0..<0,
                     nanFrame: Int64 = -1, events: [Int: ([EQNode], AudioGraph) throws -> Void] = [:]) throws -> (out: [[Float]], silent: [Bool], cascades: Int, slices: Int) {
        let eqs = makeChain()
        let g = try startedGraph([noiseSource("src", channels: channels, silence: silence, nanFrame: nanFrame)] + eqs,
                                 "src -> e0 -> e1 -> e2 -> e3 -> e4 -> out", slice: slices.max()!) {
            $0.setFusesKernelChains(fused)
        }
        XCTAssertEqual(g.testOnly_fusedChains, fused ? [["e0", "e1", "e2", "e3", "e4"]] : [])
        var out = [[Float]](repeating: [], count: channels)
        var silent: [Bool] = []
        var done = 0, k = 0
        var pending = events.sorted { $0.key < $1.key }
        while done < frames {
            while let e = pending.first, e.key <= done {
                try e.value(eqs, g)
                pending.removeFirst()
            }
            let n = min(slices[k % slices.count], frames - done)
            let r = g.render(frameCount: n)
            silent.append(r?.isSilent ?? true)
            for c in 0..<channels { out[c] += r.map { Array(UnsafeBufferPointer(start: $0.buffer.channel(c), count: n)) } ?? [Float](repeating: 0, count: n) }
            done += n
            k += 1
        }
        let tail = try XCTUnwrap(eqs[4].kernel as? EQKernel)
        return (out, silent, tail.fusedCascadeSliceCount, k)
    }

    /// Parameter steps, a glide, an un-smoothed step, a bypass fade and back, a global-gain ramp on
    /// a middle eq and automation: the fused chain gives the bits of the eqs rendered one by one,
    /// mono and stereo, with slices longer and shorter than the chain's 7 sections, through a
    /// silent stretch (the eqs ringing out: the output is flagged silent in the same slices) and
    /// a NaN.
    func testAFusedChainRendersTheSameBitsAsTheEqsOneByOne() throws {
        let events: [Int: ([EQNode], AudioGraph) throws -> Void] = [
            10_000: { eqs, _ in try eqs[1].setParameter("band.1.frequency", 1800) },
            20_000: { eqs, _ in try eqs[2].setParameter("band.0.gain", -3) },
            30_000: { eqs, _ in try eqs[0].setParameter("band.0.bypass", 1) },
            40_000: { eqs, _ in try eqs[0].setParameter("band.0.bypass", 0) },
            50_000: { eqs, _ in try eqs[3].setParameter("globalGain", -6, rampFrames: 3000) },
            58_000: { eqs, _ in try eqs[3].setParameter("globalGain", 0) },
            70_000: { eqs, _ in try eqs[4].setParameter("globalGain", 3, rampFrames: 500) },
            88_000: { eqs, _ in
                try eqs[1].setAutomation(try AutomationTimeline(events: [
                    .setValue(value: 4000, time: 1.85), .linearRamp(value: 6000, time: 1.9)], defaultValue: 5000), for: "band.2.frequency")
            },
        ]
        for channels in [1, 2] {
            for slices in [[512], [7, 64, 3, 200, 512, 33, 6]] {
                let frames = 96_000
                let what = "\(channels) channel(s), slices \(slices)"
                let fused = try renderChain(fused: true, channels: channels, frames: frames, slices: slices,
                                            silence: 60_000..<84_000, nanFrame: 86_001, events: events)
                let oneByOne = try renderChain(fused: false, channels: channels, frames: frames, slices: slices,
                                               silence: 60_000..<84_000, nanFrame: 86_001, events: events)
                assertSameBits(fused.out, oneByOne.out, what)
                XCTAssertEqual(fused.silent, oneByOne.silent, "slices flagged silent, \(what)")
                XCTAssertGreaterThan(oneByOne.silent.filter { $0 }.count, 10, "rung out in the silence")
                XCTAssertEqual(oneByOne.cascades, 0, what)
                // Both ways ran: about half the slices as one cascade (between the changes), the
                // others one by one (glides, bypass, a middle gain, silence, automation).
                XCTAssertGreaterThan(fused.cascades, fused.slices * 4 / 10, what)
                XCTAssertLessThan(fused.cascades, fused.slices * 6 / 10, what)
                XCTAssertTrue(fused.out[0].contains { $0.isNaN }, "the NaN went through")
                XCTAssertFalse(fused.out[0][87_000...].contains { $0.isNaN }, "and stayed in its slice")
                XCTAssertGreaterThan(fused.out[channels - 1][50_000..<60_000].map { abs($0) }.max()!, 0.1, what)
            }
        }
    }

    /// Switching fusion on and off while rendering (plans recompiled at slice boundaries) changes
    /// nothing: the filters' state lives in the eqs, whichever way they render.
    func testSwitchingFusionWhileRenderingChangesNoBit() throws {
        var events: [Int: ([EQNode], AudioGraph) throws -> Void] = [:]
        for k in stride(from: 5, to: 150, by: 10) { events[k * 350] = { _, g in g.setFusesKernelChains(k % 20 == 15) } }
        events[33 * 350] = { eqs, _ in try eqs[4].setParameter("band.0.frequency", 9000) }
        let switching = try renderChain(fused: true, channels: 2, frames: 60_000, slices: [256, 100], events: events)
        let oneByOne = try renderChain(fused: false, channels: 2, frames: 60_000, slices: [256, 100], events: events)
        assertSameBits(switching.out, oneByOne.out, "fusion switched on and off")
        XCTAssertGreaterThan(switching.cascades, 20)
    }

    /// A live tap on a middle eq: while it is installed the chain renders one by one (the tap sees
    /// that eq's own output); before and after, fused; output and tap the same bits as unfused.
    func testATappedMiddleEqGetsItsOwnOutputAndTheChainItsBits() throws {
        func render(fused: Bool) throws -> (out: [[Float]], tap: [[Float]], cascades: Int) {
            let eqs = makeChain()
            let g = try startedGraph([noiseSource("src", channels: 2)] + eqs, "src -> e0 -> e1 -> e2 -> e3 -> e4 -> out",
                                     slice: 256) { $0.setFusesKernelChains(fused) }
            let tapped = Mutex<[[Float]]>([[], []])
            var out: [[Float]] = [[], []]
            var tap: LiveTap?
            for k in 0..<120 {
                if k == 30 {
                    tap = try g.installTap(onNode: "e2", bus: 0, bufferSize: 256, delivery: .manual) { buffer, n, _, _ in
                        tapped.withLock { t in for c in 0..<2 { t[c] += UnsafeBufferPointer(start: buffer.channel(c), count: n) } }
                    }
                }
                if k == 40 { try eqs[2].setParameter("band.0.gain", 9) }
                if k == 80, let t = tap { _ = g.removeTap(t, fromNode: "e2") }
                let r = try XCTUnwrap(g.render(frameCount: 256))
                for c in 0..<2 { out[c] += UnsafeBufferPointer(start: r.buffer.channel(c), count: 256) }
                _ = g.deliverPendingTaps()
            }
            let tail = try XCTUnwrap(eqs[4].kernel as? EQKernel)
            return (out, tapped.withLock { $0 }, tail.fusedCascadeSliceCount)
        }
        let fused = try render(fused: true), oneByOne = try render(fused: false)
        assertSameBits(fused.out, oneByOne.out, "output")
        assertSameBits(fused.tap, oneByOne.tap, "the tap on e2")
        XCTAssertEqual(fused.tap[0].count, 50 * 256)
        // Fused before the tap and after it (30 + 40 slices), never while it was there.
        XCTAssertEqual(fused.cascades, 70)
    }

    /// An offline tap (graph-file `taps`: a `KernelTap` on the kernel) on a middle eq: the chain
    /// renders one by one while it is attached, and tap and output are the unfused bits.
    func testAnOfflineTapOnAMiddleEqRecordsItsOwnOutput() throws {
        func render(fused: Bool) throws -> (out: [[Float]], tap: [[Float]], cascades: Int) {
            let eqs = makeChain()
            let g = try startedGraph([noiseSource("src", channels: 2)] + eqs, "src -> e0 -> e1 -> e2 -> e3 -> e4 -> out",
                                     slice: 128) { $0.setFusesKernelChains(fused) }
            let kernel = try XCTUnwrap(eqs[1].kernel)
            let recorder = KernelTap(bus: 0, channelCount: 2, capacity: 128)
            var out: [[Float]] = [[], []], tap: [[Float]] = [[], []]
            for k in 0..<60 {
                if k == 20 { kernel.attachTap(recorder) }
                let r = try XCTUnwrap(g.render(frameCount: 128))
                for c in 0..<2 { out[c] += UnsafeBufferPointer(start: r.buffer.channel(c), count: 128) }
                recorder.drain { buffer, n in for c in 0..<2 { tap[c] += UnsafeBufferPointer(start: buffer.channel(c), count: n) } }
            }
            return (out, tap, try XCTUnwrap(eqs[4].kernel as? EQKernel).fusedCascadeSliceCount)
        }
        let fused = try render(fused: true), oneByOne = try render(fused: false)
        assertSameBits(fused.out, oneByOne.out, "output")
        assertSameBits(fused.tap, oneByOne.tap, "the tap on e1")
        XCTAssertEqual(fused.tap[0].count, 40 * 128)
        XCTAssertEqual(fused.cascades, 20, "fused until the tap came")
    }

    /// Which eqs fuse: an eq read by a second node (another mixer input) or changing the channel
    /// count ends a chain; chains in a mixer's branches fuse each; rendered with two threads the
    /// output is the same bits as serial and unfused.
    func testChainsEndAtASecondConsumerAndAChannelCountChange() throws {
        func build(fused: Bool, threads: Int) throws -> AudioGraph {
            let b1 = peak("b1", 900)
            b1.declaredFormat.channelCount = 2
            // Oscillators (a render callback keeps a graph on one thread).
            func noise(_ id: String, _ seed: UInt64) -> OscillatorNode {
                OscillatorNode(id: id, sampleRate: sr, properties: OscillatorProperties(waveform: .noise, seed: seed))
            }
            let nodes: [GraphNode] = [noise("srcA", 1), noise("srcB", 2),
                                      peak("a0", 200), peak("a1", 400), peak("a2", 800), peak("a3", 1600),
                                      peak("b0", 300), b1, peak("b2", 2000), peak("b3", 4000),
                                      MixerNode(id: "mix", sampleRate: sr, inputBusCount: 3)]
            return try startedGraph(nodes, """
                srcA -> a0 -> a1 -> a2 -> a3 -> mix:0; a1 -> mix:2
                srcB -> b0 -> b1 -> b2 -> b3 -> mix:1; mix -> out
                """, slice: 300) { g in
                g.setFusesKernelChains(fused)
                try g.setRenderThreadCount(threads)
            }
        }
        let fused = try build(fused: true, threads: 2)
        XCTAssertEqual(Set(fused.testOnly_fusedChains), [["a0", "a1"], ["a2", "a3"], ["b1", "b2", "b3"]])
        XCTAssertFalse(fused.testOnly_parallelGroups.groups.isEmpty, "the branches render in parallel")
        let serial = try build(fused: false, threads: 1)
        XCTAssertEqual(serial.testOnly_fusedChains, [])
        assertSameBits(renderFrames(fused, frames: 30_000, channels: 2), renderFrames(serial, frames: 30_000, channels: 2),
                       "two threads fused against one unfused")
    }

    /// An eq whose output also feeds a parameter ends the chain there (it may still be a chain's
    /// last), and an eq with a parameter input is in none.
    func testChainsEndAtParameterInputs() throws {
        func build(fused: Bool) throws -> AudioGraph {
            let nodes: [GraphNode] = [noiseSource("src", channels: 1), peak("e0", 300), peak("e1", 600), peak("e2", 1200),
                                      peak("e3", 2400), peak("e4", 4800)]
            return try startedGraph(nodes, "src -> e0 -> e1 -> e2 -> e3 -> e4 -> out", slice: 128) { g in
                g.setFusesKernelChains(fused)
                try g.connect("e1", to: "e3", parameter: ParameterAddress(scope: .global, element: 0, group: "band", name: "gain"))
            }
        }
        let fused = try build(fused: true)
        XCTAssertEqual(fused.testOnly_fusedChains, [["e0", "e1"]])
        assertSameBits(renderFrames(fused, frames: 20_000, channels: 1), renderFrames(try build(fused: false), frames: 20_000, channels: 1),
                       "parameter input")
    }

    func peak(_ id: String, _ f: Double) -> EQNode {
        EQNode(id: id, sampleRate: sr, properties: EQProperties(bands: [EQBand(type: .peak, frequency: f, gain: 5, q: 3)]))
    }
}
