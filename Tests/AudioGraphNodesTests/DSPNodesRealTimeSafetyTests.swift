// Proves the eq, delay, converter, analyser, reverb, varispeed and distortion render paths allocate nothing and take no lock.
import AudioGraphRealtime
import AudioGraphCore
import Foundation
import Synchronization
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class DSPNodesRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
    }

    /// oscillator (44.1 kHz) -> converter (48 kHz, best: libsoxr) -> eq (3 bands, automated frequency) ->
    /// delay (automated wet) -> out: 2000 slices rendered with only the render calls tracked,
    /// parameter steps, ramps and a quality change in between.
    func testRenderAllocatesNothingAndTakesNoLock() throws {
        let osc = OscillatorNode(id: "osc", sampleRate: 44100, properties: OscillatorProperties(waveform: .sine, channels: 2))
        osc.declaredFormat.sampleRate = 44100
        let conv = ConverterNode(id: "conv", properties: ConverterProperties(format: FormatDescription(sampleRate: 48000)))
        let eq = EQNode(id: "eq", sampleRate: 48000, properties: EQProperties(bands: [
            EQBand(type: .peak, frequency: 1000, gain: 6), EQBand(type: .lowPass, frequency: 8000),
            EQBand(type: .highShelf, frequency: 3000, gain: -3)]))
        try eq.setAutomation(try AutomationTimeline(events: [
            .setValue(value: 500, time: 0.5), .exponentialRamp(value: 5000, time: 2)], defaultValue: 1000),
            for: "band.0.frequency")
        let delay = DelayNode(id: "echo", sampleRate: 48000)
        try delay.setParameter("delayTime", 0.05)
        try delay.setAutomation(try AutomationTimeline(events: [
            .setValueCurve(values: [100, 20, 80, 50], startTime: 1, duration: 2)], defaultValue: 100), for: "wetDryMix")
        let g = try startedGraph([osc, conv, eq, delay], "osc -> conv -> eq -> echo -> out", slice: 256)
        for _ in 0..<8 { _ = g.render(frameCount: 256) }   // warm up (first-touch lazies)

        var allocations: UInt64 = 0, locks: UInt64 = 0, audible = 0
        var counted = RealTimeScaffold.Counts()
        var firstBad: Int?   // run with AG_COUNTER_BACKTRACE=1 to see where
        for i in 0..<2000 {
            switch i {
            case 300: try eq.setParameter("band.1.frequency", 2000)
            case 500: try eq.setParameter("globalGain", -6, rampFrames: 4800)
            case 700: try delay.setParameter("delayTime", 0.3)
            case 900: try delay.setParameter("feedback", -70, rampFrames: 2000)
            case 1100: try eq.setParameter("band.2.bypass", 1)
            case 1300:
                try conv.setProperty("quality", "medium")
                try g.update(waitUntilApplied: false)
            default: break
            }
            let (r, sliceCounts) = RealTimeScaffold.count { g.render(frameCount: 256) }
            counted += sliceCounts
            if firstBad == nil && sliceCounts.allocations + sliceCounts.locks > 0 { firstBad = i }
            allocations += sliceCounts.allocations
            locks += sliceCounts.locks
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertEqual(allocations, 0, "first at slice \(firstBad ?? -1)")
        XCTAssertEqual(locks, 0, "first at slice \(firstBad ?? -1)")
        XCTAssertEqual(counted.controlLocks, 0, "the render path took a ControlLock")
        XCTAssertEqual(audible, 2000)
    }

    /// oscillator -> varispeed (automated rate) -> reverb (automated mix) -> out: 1200 slices
    /// with only the render calls tracked; rate and mix steps and ramps, bypass on and off, and
    /// a preset change in between.
    func testReverbAndVarispeedRenderAllocateNothingAndTakeNoLock() throws {
        let osc = OscillatorNode(id: "osc", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine, channels: 2))
        let vs = VarispeedNode(id: "vs", sampleRate: 48000)
        try vs.setAutomation(try AutomationTimeline(events: [
            .setValue(value: 0.5, time: 0.5), .linearRamp(value: 2, time: 3)], defaultValue: 1), for: "rate")
        let rv = ReverbNode(id: "rv", sampleRate: 48000, preset: .largeHall)
        try rv.setAutomation(try AutomationTimeline(events: [
            .setValueCurve(values: [10, 90, 40, 60], startTime: 1, duration: 2)], defaultValue: 50), for: "wetDryMix")
        let g = try startedGraph([osc, vs, rv], "osc -> vs -> rv -> out", slice: 256)
        for _ in 0..<8 { _ = g.render(frameCount: 256) }

        var allocations: UInt64 = 0, locks: UInt64 = 0, audible = 0
        var counted = RealTimeScaffold.Counts()
        var firstBad: Int?
        for i in 0..<1200 {
            switch i {
            case 300: try vs.setParameter("bypass", 1)
            case 400: try vs.setParameter("bypass", 0)
            case 600: try rv.setParameter("bypass", 1)
            case 700: try rv.setParameter("bypass", 0)
            case 900:
                try rv.setProperty("preset", "cathedral")
                try g.update(waitUntilApplied: false)
            case 1100: try rv.setParameter("wetDryMix", 100, rampFrames: 4800)
            default: break
            }
            let (r, sliceCounts) = RealTimeScaffold.count { g.render(frameCount: 256) }
            counted += sliceCounts
            if firstBad == nil && sliceCounts.allocations + sliceCounts.locks > 0 { firstBad = i }
            allocations += sliceCounts.allocations
            locks += sliceCounts.locks
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertEqual(allocations, 0, "first at slice \(firstBad ?? -1)")
        XCTAssertEqual(locks, 0, "first at slice \(firstBad ?? -1)")
        XCTAssertEqual(counted.controlLocks, 0, "the render path took a ControlLock")
        XCTAssertEqual(audible, 1200)
    }

    /// oscillator -> distortion (multiEverythingIsBroken: every stage on; delay, decimation and
    /// ring frequency automated) -> out: 1200 slices with only the render calls tracked; steps
    /// and ramps on the other parameters in between, constant and per-sample slices both.
    func testDistortionRenderAllocatesNothingAndTakesNoLock() throws {
        let osc = OscillatorNode(id: "osc", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine, channels: 2))
        let dist = DistortionNode(id: "dist", sampleRate: 48000, preset: .multiEverythingIsBroken)
        try dist.setAutomation(try AutomationTimeline(events: [
            .linearRamp(value: 400, time: 1), .setValue(value: 3, time: 2)], defaultValue: 10), for: "delay")
        try dist.setAutomation(try AutomationTimeline(events: [
            .setValueCurve(values: [0, 100, 30], startTime: 2.5, duration: 1)], defaultValue: 70), for: "decimation")
        try dist.setAutomation(try AutomationTimeline(events: [
            .exponentialRamp(value: 5000, time: 5)], defaultValue: 50), for: "ringModFreq1")
        let g = try startedGraph([osc, dist], "osc -> dist -> out", slice: 256)
        for _ in 0..<8 { _ = g.render(frameCount: 256) }

        var counts = RealTimeScaffold.Counts(), audible = 0
        var firstBad: Int?
        for i in 0..<1200 {
            switch i {
            case 200: try dist.setParameter("finalMix", 0)
            case 300: try dist.setParameter("finalMix", 100, rampFrames: 4800)
            case 500: try dist.setParameter("rounding", 100)
            case 700: try dist.setParameter("softClipGain", 20, rampFrames: 9600)
            case 900: try dist.setParameter("cubicTerm", 0)
            default: break
            }
            let (r, c) = RealTimeScaffold.count { g.render(frameCount: 256) }
            if firstBad == nil && c.violation != nil { firstBad = i }
            counts += c
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertNil(counts.violation, "first at slice \(firstBad ?? -1)")
        XCTAssertEqual(audible, 1200)
    }

    /// oscillator -> analyser (fftSize 4096) -> out: 2000 slices with only the render calls
    /// tracked while another thread reads the frequency and time-domain data all along.
    func testAnalyserRenderAllocatesNothingAndTakesNoLockWhileRead() throws {
        let osc = OscillatorNode(id: "osc", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine, channels: 2))
        try osc.setParameter("frequency", 1000)
        let analyser = try AnalyserNode(id: "an", properties: AnalyserProperties(fftSize: 4096))
        let g = try startedGraph([osc, analyser], "osc -> an -> out", slice: 256)
        for _ in 0..<8 { _ = g.render(frameCount: 256) }
        let done = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let readerThread = Thread {
            var db = [Float](repeating: 0, count: 2048), time = [Float](repeating: 0, count: 4096)
            while !done.load(ordering: .relaxed) {
                analyser.getFloatFrequencyData(into: &db)
                analyser.getFloatTimeDomainData(into: &time)
                reads.add(1, ordering: .relaxed)
            }
        }
        readerThread.start()
        var allocations: UInt64 = 0, locks: UInt64 = 0
        var counted = RealTimeScaffold.Counts()
        while reads.load(ordering: .relaxed) == 0 { usleep(100) }
        for _ in 0..<2000 {
            let (_, sliceCounts) = RealTimeScaffold.count { _ = g.render(frameCount: 256) }
            counted += sliceCounts
            allocations += sliceCounts.allocations
            locks += sliceCounts.locks
        }
        done.store(true, ordering: .relaxed)
        while !readerThread.isFinished { usleep(100) }
        XCTAssertEqual(allocations, 0)
        XCTAssertEqual(locks, 0)
        XCTAssertEqual(counted.controlLocks, 0, "the render path took a ControlLock")
        XCTAssertGreaterThan(reads.load(ordering: .relaxed), 0)
        // The reader saw the tone: 1 kHz at 48000/4096 Hz per bin is bin 85.3.
        var db = [Float](repeating: 0, count: 2048)
        analyser.getFloatFrequencyData(into: &db)
        XCTAssertEqual(db.indices.max(by: { db[$0] < db[$1] }), 85)
    }

    /// The non-finite paths (issue 22): a source with NaN and infinity in every slice -> eq ->
    /// delay -> timePitch -> environment (occluded, filtered reverb) -> out. The checks and
    /// resets that contain them (filter states cleared, delay memory cleaned, rubberband's input
    /// silenced) allocate nothing and take no lock.
    func testNonFiniteContainmentAllocatesNothingAndTakesNoLock() throws {
        let src = formulaSource("src", channels: 2) { c, n in
            n % 97 == 3 ? .nan : (n % 131 == 7 ? (c == 0 ? .infinity : -.infinity) : Float(0.4 * sin(Double(n) * 0.05)))
        }
        let eq = EQNode(id: "eq", sampleRate: 48000, properties: EQProperties(bands: [
            EQBand(type: .peak, frequency: 1000, gain: 6), EQBand(type: .lowPass, frequency: 8000)]))
        let delay = DelayNode(id: "echo", sampleRate: 48000)
        try delay.setParameter("delayTime", 0.01)
        let tp = TimePitchNode(id: "tp", sampleRate: 48000)
        try tp.setParameter("pitch", 300)
        var properties = EnvironmentProperties()
        properties.reverb.enabled = true
        properties.reverb.filter = EQBand(type: .lowPass, frequency: 4000)
        let env = EnvironmentNode(id: "env", sampleRate: 48000, inputBusCount: 1, properties: properties)
        try env.setParameter("input.0.occlusion", -20)
        let g = try startedGraph([src, eq, delay, tp, env], "src -> eq -> echo -> tp -> env -> out", slice: 256)
        for _ in 0..<8 { _ = g.render(frameCount: 256) }

        var allocations: UInt64 = 0, locks: UInt64 = 0, finite = 0
        var counted = RealTimeScaffold.Counts()
        for _ in 0..<400 {
            let (r, sliceCounts) = RealTimeScaffold.count { g.render(frameCount: 256) }
            counted += sliceCounts
            allocations += sliceCounts.allocations
            locks += sliceCounts.locks
            if let r, (0..<r.buffer.channelCount).allSatisfy({ c in NonFiniteSamples.allFinite(r.buffer.channel(c), count: 256) }) { finite += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertEqual(allocations, 0)
        XCTAssertEqual(locks, 0)
        XCTAssertEqual(counted.controlLocks, 0, "the render path took a ControlLock")
        XCTAssertEqual(finite, 400, "timePitch silences what reaches it, so the environment never sees NaN")
    }

    /// noise -> 12 eqs in series (fused into one cascade, see EQChain) -> out: 1500 slices with only
    /// the render calls tracked; a band glide, a bypass fade, a middle eq's gain ramp (each renders
    /// the eqs one by one for a while) and a live tap on a middle eq installed and removed between them.
    func testFusedEqChainRenderAllocatesNothingAndTakesNoLock() throws {
        let src = OscillatorNode(id: "src", sampleRate: 48000, properties: OscillatorProperties(waveform: .noise, channels: 1, seed: 3))
        var eqs: [EQNode] = []
        for i in 0..<12 {
            let band = EQBand(type: .peak, frequency: Double(200 + 300 * i), gain: i % 2 == 0 ? 4 : -4, q: 1.5)
            eqs.append(EQNode(id: "eq\(i)", sampleRate: 48000, properties: EQProperties(bands: [band])))
        }
        let ids: [String] = eqs.map { $0.id }
        let g = try startedGraph([src] + eqs, "src -> " + ids.joined(separator: " -> ") + " -> out", slice: 256)
        XCTAssertEqual(g.testOnly_fusedChains, [ids])
        for _ in 0..<8 { _ = g.render(frameCount: 256) }

        var counted = RealTimeScaffold.Counts()
        var firstBad: Int?
        var tap: LiveTap?
        for i in 0..<1500 {
            switch i {
            case 200: try eqs[5].setParameter("band.0.frequency", 3000)
            case 400: try eqs[2].setParameter("band.0.bypass", 1)
            case 500: try eqs[2].setParameter("band.0.bypass", 0)
            case 700: try eqs[7].setParameter("globalGain", -6, rampFrames: 5000)
            case 800: try eqs[7].setParameter("globalGain", 0)
            case 900: tap = try g.installTap(onNode: "eq4", bus: 0, bufferSize: 256, delivery: LiveTap.Delivery.manual) { _, _, _, _ in }
            case 1000: if let t = tap { _ = g.removeTap(t, fromNode: "eq4") }
            default: break
            }
            let (_, sliceCounts) = RealTimeScaffold.count { g.render(frameCount: 256) }
            counted += sliceCounts
            if firstBad == nil && sliceCounts.allocations + sliceCounts.locks > 0 { firstBad = i }
            _ = g.deliverPendingTaps()
        }
        g.collectRetiredPlans()
        XCTAssertEqual(counted.allocations, 0, "first at slice \(firstBad ?? -1)")
        XCTAssertEqual(counted.locks, 0, "first at slice \(firstBad ?? -1)")
        XCTAssertEqual(counted.controlLocks, 0, "the render path took a ControlLock")
        let cascades = try XCTUnwrap(eqs[11].kernel as? EQKernel).fusedCascadeSliceCount
        XCTAssertGreaterThan(cascades, 1000, "most slices ran as one cascade")
        XCTAssertLessThan(cascades, 1400, "some ran one by one")
    }
}
