// Tests that the scheduling probe wakes at its period and measures a stall of its own thread.
import AudioGraphRealtime
import AudioGraphTesting
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class SchedulingProbeTests: XCTestCase {
    /// 300 ms at a 1 ms period: about 300 wake-ups (at least 150 even on a loaded machine), none
    /// counted before the probe started again.
    func testWakesAtItsPeriod() {
        let probe = SchedulingProbe(period: 0.001)
        probe.start()
        usleep(300_000)
        let report = probe.stop()
        XCTAssertGreaterThan(report.wakeups, 150, "\(report)")
        XCTAssertLessThanOrEqual(report.wakeups, 301, "\(report)")
        probe.start()
        let again = probe.stop()
        XCTAssertLessThan(again.wakeups, 50, "counts restart with start()")
    }

    /// A 15 ms busy stretch on the probe's thread (begun just after a wake-up) shows up as a
    /// wake-up 14 ms late: the stretch less the 1 ms period it overlaps.
    func testAStallIsMeasured() {
        let probe = SchedulingProbe(period: 0.001)
        probe.start()
        usleep(20_000)
        probe.testOnly_stall(seconds: 0.015)
        usleep(60_000)
        let report = probe.stop()
        XCTAssertGreaterThanOrEqual(report.maximumLateness, 0.0135, "\(report)")
        XCTAssertGreaterThanOrEqual(report.lateOver10ms, 1, "\(report)")
        XCTAssertTrue(report.description.contains("ms late"))
    }

    /// One probe per CPU, each on its own CPU; a stall seen by one of them is in the merged
    /// report (the live tests merge them: a virtual machine's CPUs stall one at a time).
    func testOneProbePerCPUEachOnItsCPU() {
        let probes = SchedulingProbe.onEveryCPU()
        XCTAssertEqual(probes.count, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        for probe in probes { probe.start() }
        usleep(20_000)
        probes.last?.testOnly_stall(seconds: 0.015)
        usleep(60_000)
        let reports = probes.map { $0.stop() }
        for probe in probes { XCTAssertEqual(probe.lastCPU, probe.cpu, "a pinned probe ran on another CPU") }
        let merged = SchedulingProbe.Report.merged(reports)
        XCTAssertEqual(merged.wakeups, reports.reduce(0) { $0 + $1.wakeups })
        XCTAssertGreaterThanOrEqual(merged.maximumLateness, 0.0135, "\(merged)")
        XCTAssertEqual(merged.stalls.count, reports.reduce(0) { $0 + $1.stalls.count })
        XCTAssertGreaterThanOrEqual(reports.last?.lateOver10ms ?? 0, 1, "the stall is the last probe's")
    }

    /// The probe outranks the engine: with the probe and a `SCHED_FIFO` thread at the render
    /// threads' priority pinned to the same CPU, a 40 ms busy stretch of that thread must not
    /// delay the probe (it preempts). A probe below the render priority (it ran at 10 before)
    /// woke about 40 ms late here, and would have blamed the machine for the engine's stall.
    func testOutranksTheRenderThread() throws {
        XCTAssertGreaterThan(SchedulingProbe.priority, PosixThread.renderPriority)
        final class Box: @unchecked Sendable { var report: SchedulingProbe.Report?; var priority: Int32 = 0; var spun = 0.0 }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread {
            // Threads inherit the CPU mask of the thread that creates them: probe and spinner share CPU 0.
            var set = cpu_set_t()
            withUnsafeMutableBytes(of: &set) { $0.initializeMemory(as: UInt8.self, repeating: 0); $0[0] = 1 }
            // sched_setaffinity is a GNU extension the Glibc module does not import: look it up.
            typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
            guard let symbol = dlsym(nil, "sched_setaffinity"),
                  withUnsafeBytes(of: &set, { unsafeBitCast(symbol, to: SetAffinity.self)(0, $0.count, $0.baseAddress!) }) == 0
            else { done.signal(); return }
            let probe = SchedulingProbe(period: 0.001)
            probe.start()
            usleep(20_000)
            let spinner = Thread {
                var param = sched_param()
                param.sched_priority = PosixThread.renderPriority
                guard pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0 else { return }
                let start = Date()
                while Date().timeIntervalSince(start) < 0.040 {}
                box.spun = Date().timeIntervalSince(start)
            }
            spinner.start()
            while !spinner.isFinished { usleep(1000) }
            usleep(10_000)
            box.report = probe.stop()
            box.priority = probe.threadPriority
            done.signal()
        }.start()
        done.wait()
        let report = try XCTUnwrap(box.report, "could not pin threads to CPU 0")
        try XCTSkipUnless(report.isRealtime && box.spun > 0, "no permission for SCHED_FIFO: \(report)")
        XCTAssertEqual(box.priority, SchedulingProbe.priority)
        XCTAssertLessThan(report.maximumLateness, 0.010, "a render-priority thread held the probe off: \(report)")
    }

    /// The server-class probe keeps the time-sharing policy at nice −11 (as PulseAudio's main
    /// thread): it reports itself not real-time, runs at that nice level, and a real-time thread
    /// busy for 40 ms on its CPU holds it off (about 40 ms late), as it would hold the server's
    /// main thread off.
    func testAServerClassProbeRunsAtTheServerMainThreadsNiceLevel() throws {
        final class Box: @unchecked Sendable { var report: SchedulingProbe.Report?; var nice: Int?; var spun = 0.0 }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread {
            var set = cpu_set_t()
            withUnsafeMutableBytes(of: &set) { $0.initializeMemory(as: UInt8.self, repeating: 0); $0[0] = 1 }
            typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
            guard let symbol = dlsym(nil, "sched_setaffinity"),
                  withUnsafeBytes(of: &set, { unsafeBitCast(symbol, to: SetAffinity.self)(0, $0.count, $0.baseAddress!) }) == 0
            else { done.signal(); return }
            let probe = SchedulingProbe(period: 0.001, niceness: SchedulingProbe.serverMainThreadNiceness)
            probe.start()
            usleep(20_000)
            // The probe thread's nice level, from /proc (field 19 of its stat line).
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            for task in tasks where (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == "ag-probe" {
                if let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                   let close = stat.lastIndex(of: ")") {
                    let fields = stat[stat.index(after: close)...].split(separator: " ")
                    box.nice = Int(fields[16])
                }
            }
            let spinner = Thread {
                var param = sched_param()
                param.sched_priority = PosixThread.renderPriority
                guard pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0 else { return }
                let start = Date()
                while Date().timeIntervalSince(start) < 0.040 {}
                box.spun = Date().timeIntervalSince(start)
            }
            spinner.start()
            while !spinner.isFinished { usleep(1000) }
            usleep(10_000)
            box.report = probe.stop()
            done.signal()
        }.start()
        done.wait()
        let report = try XCTUnwrap(box.report, "could not pin threads to CPU 0")
        XCTAssertFalse(report.isRealtime)
        XCTAssertEqual(box.nice, -11, "the probe thread's nice level")
        try XCTSkipUnless(box.spun > 0, "no permission for SCHED_FIFO: \(report)")
        XCTAssertGreaterThan(report.maximumLateness, 0.030, "a real-time thread holds a time-sharing probe off: \(report)")
    }
}
