// Proves the timePitch render path (rubberband's process, retrieve, ratio changes, restart after bypass, the channel helper thread) allocates nothing and takes no lock.
import AudioGraphRealtime
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class TimePitchRealTimeSafetyTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!RealTimeScaffold.isCounting, "allocations are not counted under sanitizers")
        XCTAssertTrue(RealTimeScaffold.interposerIsActive, "the malloc interposer is not linked into the test bundle")
    }

    /// Renders `slices` slices of 256 frames with only the render calls tracked, calling
    /// `change(i)` before slice i; returns (allocations, locks, first bad slice, audible slices).
    func measure(_ g: AudioGraph, slices: Int, _ change: (Int) throws -> Void) rethrows
        -> (allocations: UInt64, frees: UInt64, locks: UInt64, firstBad: Int?, audible: Int) {
        var allocations: UInt64 = 0, frees: UInt64 = 0, locks: UInt64 = 0, audible = 0
        var counted = RealTimeScaffold.Counts()
        var firstBad: Int?   // run with AG_COUNTER_BACKTRACE=1 to see where
        for i in 0..<slices {
            try change(i)
            let (r, sliceCounts) = RealTimeScaffold.count { g.render(frameCount: 256) }
            counted += sliceCounts
            if firstBad == nil && sliceCounts.allocations + sliceCounts.locks > 0 { firstBad = i }
            allocations += sliceCounts.allocations
            frees += sliceCounts.frees
            locks += sliceCounts.locks
            if let r, !r.isSilent { audible += 1 }
        }
        g.collectRetiredPlans()
        XCTAssertEqual(counted.controlLocks, 0, "the render path took a ControlLock")
        return (allocations, frees, locks, firstBad, audible)
    }

    /// oscillator (stereo) -> timePitch -> out: 2000 slices with rate and pitch steps, ramps,
    /// automation, the extremes (rate 32 and 1/32, ±2400 cents), and bypass on and off (rubberband
    /// reset and primed again on the render thread).
    func testRenderAllocatesNothingAndTakesNoLock() throws {
        try checkRenderAllocatesNothingAndTakesNoLock(quality: .finer, automatePitch: true)
    }

    /// The same with the stretcher made at 0 cents for an offline file render (no always-on
    /// pitch resampler): the resampler starts on the render thread when the pitch first moves.
    /// It leaves a gap of 4 silent slices (≈ 20 ms) there, which is why live nodes keep it on.
    /// An offline file render also stretches channel 1 on the kernel's helper thread
    /// (``RenderHelperThread``), which counts its own allocations and locks from its start (as
    /// render workers do) and here runs every channel-1 job: nothing is counted there either.
    func testRenderAllocatesNothingAndTakesNoLockWhenThePitchStartsAtZero() throws {
        try RealTimeScaffold.countingHelperThreads {
            try checkRenderAllocatesNothingAndTakesNoLock(quality: .finer, automatePitch: false, livePitchChanges: false,
                                                          silentSlices: 4)
        }
    }

    /// The helper's thread is counted: the same offline render with the channel-1 job made to
    /// allocate (an array) and, in a second run, to take a `pthread_mutex_lock`, run on the
    /// helper thread only: the allocations and the locks are counted, one per job at least.
    /// (Before the helper counted its thread — the timePitch node's ChannelStretchWorker did
    /// not — this test failed: nothing was counted.)
    func testScaffoldCatchesAnAllocationAndALockAddedToTheHelpersJob() throws {
        final class Lock: @unchecked Sendable {
            var mutex = pthread_mutex_t()
            init() { pthread_mutex_init(&mutex, nil) }
            deinit { pthread_mutex_destroy(&mutex) }
        }
        let lock = Lock()
        let violations: [(String, @Sendable () -> Void)] = [
            ("allocation", { let scratch = [Float](repeating: 0.25, count: 64); precondition(scratch[63] == 0.25) }),
            ("lock", { pthread_mutex_lock(&lock.mutex); pthread_mutex_unlock(&lock.mutex) }),
        ]
        for (name, violation) in violations {
            try RealTimeScaffold.countingHelperThreads {
                let osc = OscillatorNode(id: "osc", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine, channels: 2))
                let tp = TimePitchNode(id: "tp", sampleRate: 48000, quality: .finer, livePitchChanges: false)
                let g = try startedGraph([osc, tp], "osc -> tp -> out", slice: 256)
                let k = try XCTUnwrap(tp.kernel as? TimePitchKernel)
                let channels = try XCTUnwrap(k.helperChannels)
                k.channelHelper = try RenderHelperThread(name: "ag-test-broken", capacity: channels.capacity) { slot in
                    violation()
                    channels.feed(slot)
                }
                for _ in 0..<8 { _ = g.render(frameCount: 256) }
                let before = k.channelHelper?.jobsRun ?? 0
                let m = measure(g, slices: 100) { _ in }
                let jobs = (k.channelHelper?.jobsRun ?? 0) - before
                print("time-pitch helper with a broken job (\(name)): \(jobs) jobs on the helper; \(m)")
                XCTAssertGreaterThanOrEqual(jobs, 90, "\(name): the helper ran the jobs")
                XCTAssertGreaterThanOrEqual(name == "lock" ? m.locks : m.allocations, UInt64(jobs),
                                            "\(name): the helper's thread was counted, once per job at least")
                g.stop()
                g.uninitialize()
            }
        }
    }


    /// The same with the R2 engine (`quality` `faster`; its pitch is fixed at initialize, so the
    /// pitch changes are ignored). Before the pitch was fixed and the rate limited, R2
    /// allocated on the render thread at the pitch ramps and at rate 32 (this test failed).
    func testFasterRenderAllocatesNothingAndTakesNoLock() throws {
        try checkRenderAllocatesNothingAndTakesNoLock(quality: .faster, automatePitch: true)
        try checkRenderAllocatesNothingAndTakesNoLock(quality: .faster, automatePitch: false)
    }

    /// The same with WSOLA (`quality` `fastest`): segments made, input fed and skipped (rate
    /// 32), the FIFO read, bypass and the restart after it; and its pitch shift (libsamplerate)
    /// started in the middle of the signal by a pitch set while playing (-1200 at slice 700) or
    /// by the automation (from 0.5 s), ratio steps to ±2400 cents and a ramp, restarted after
    /// bypass. (Before, the pitch was refused or ignored in this mode: none of that ran.)
    func testFastestRenderAllocatesNothingAndTakesNoLock() throws {
        try checkRenderAllocatesNothingAndTakesNoLock(quality: .fastest, automatePitch: false)
        try checkRenderAllocatesNothingAndTakesNoLock(quality: .fastest, automatePitch: true)
    }

    func checkRenderAllocatesNothingAndTakesNoLock(quality: TimePitchQuality, automatePitch: Bool,
                                                   livePitchChanges: Bool = true, silentSlices: Int = 0,
                                                   file: StaticString = #filePath, line: UInt = #line) throws {
        let osc = OscillatorNode(id: "osc", sampleRate: 48000, properties: OscillatorProperties(waveform: .sine, channels: 2))
        try osc.setParameter("frequency", 500)
        let tp = TimePitchNode(id: "tp", sampleRate: 48000, quality: quality, livePitchChanges: livePitchChanges)
        if automatePitch {
            try tp.setAutomation(try AutomationTimeline(events: [
                .setValue(value: 0, time: 0.5), .linearRamp(value: 700, time: 2)], defaultValue: 0), for: "pitch")
        }
        // An offline file render's node renders on two threads (channel 1 on the kernel's helper).
        let g = try startedGraph([osc, tp], "osc -> tp -> out", slice: 256,
                                 configure: { try $0.setRenderThreadCount(livePitchChanges ? 1 : 2, startingWorkersWhenParallel: true) })
        for _ in 0..<8 { _ = g.render(frameCount: 256) }   // warm up (first-touch lazies)
        let m = try measure(g, slices: 2000) { i in
            switch i {
            case 300: try tp.setParameter("rate", 1.5)
            case 500: try tp.setParameter("rate", 0.5, rampFrames: 4800)
            case 700: try tp.setParameter("pitch", -1200)
            case 800: try tp.setParameter("rate", 32)
            case 900: try tp.setParameter("rate", 1.0 / 32)
            case 1000: try tp.setParameter("pitch", 2400)
            case 1100: try tp.setParameter("bypass", 1)
            case 1300: try tp.setParameter("bypass", 0)
            case 1500: try tp.setParameter("pitch", -2400, rampFrames: 24000)
            case 1700: try tp.setParameter("rate", 2)
            default: break
            }
        }
        XCTAssertEqual(m.allocations, 0, "\(quality): first at slice \(m.firstBad ?? -1)", file: file, line: line)
        XCTAssertEqual(m.frees, 0, "\(quality)", file: file, line: line)
        XCTAssertEqual(m.locks, 0, "\(quality): first at slice \(m.firstBad ?? -1)", file: file, line: line)
        XCTAssertEqual(m.audible, 2000 - silentSlices, "\(quality)", file: file, line: line)
        if quality == .fastest {
            let shifter = try XCTUnwrap((tp.kernel as? TimePitchKernel)?.shifter, file: file, line: line)
            XCTAssertTrue(shifter.isShifting, "the pitch shift ran", file: file, line: line)
        }
        if tp.splitsChannels {
            let helper = try XCTUnwrap((tp.kernel as? TimePitchKernel)?.channelHelper, file: file, line: line)
            XCTAssertGreaterThan(helper.jobsRun, 2000, "the helper thread stretched channel 1", file: file, line: line)
        }
    }
}
