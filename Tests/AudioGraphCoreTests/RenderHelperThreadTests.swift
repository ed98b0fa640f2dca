// Tests of RenderHelperThread: every job runs exactly once, in order, on the helper or on the render thread collecting it.
import XCTest
@testable import AudioGraphCore

#if canImport(Glibc)
import Glibc
#endif

final class RenderHelperThreadTests: XCTestCase {
    /// Busy-waits about `microseconds` (the render thread's own half of a slice).
    private func busy(_ microseconds: Double) {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        let end = Double(t.tv_sec) * 1e6 + Double(t.tv_nsec) / 1e3 + microseconds
        repeat { clock_gettime(CLOCK_MONOTONIC, &t) } while Double(t.tv_sec) * 1e6 + Double(t.tv_nsec) / 1e3 < end
    }

    /// 3000 slices: with no work of its own the render thread mostly takes the job back (the
    /// helper, asleep after 200 µs without a job, is still waking) and then spends those 200 µs
    /// on the rest of the slice (when a late helper could run a job a second time); with 100 µs
    /// of its own the helper mostly runs it.
    /// Each job runs exactly once with its slice's argument, its result visible after `collect()`,
    /// and no job runs again later.
    func testEveryJobRunsExactlyOnceWhoeverRunsIt() throws {
        final class Record: @unchecked Sendable {
            var seen: [Int] = Array(repeating: 0, count: 3000)
        }
        let record = Record()
        var helper: RenderHelperThread? = try RenderHelperThread(name: "ag-test-helper") { i in record.seen[i] += 1 }
        for i in 0..<3000 {
            helper!.post(i)
            if i >= 1500 { busy(100) }
            helper!.collect()
            XCTAssertEqual(record.seen[i], 1, "slice \(i): the job ran once before collect() returned")
            if record.seen[i] != 1 { break }
            if i < 1500 { busy(200) }
        }
        let onHelper = helper!.jobsRun
        helper = nil   // joins the thread: any late run has happened
        print("render helper: \(onHelper) of 3000 jobs on the helper, \(3000 - onHelper) taken back by the render thread")
        XCTAssertGreaterThan(onHelper, 0, "the helper ran jobs")
        XCTAssertLessThan(onHelper, 3000, "the render thread took jobs back")
        XCTAssertEqual(record.seen.firstIndex { $0 != 1 }, nil, "every job ran exactly once")
    }

    /// A chain of jobs that each continue the state the one before left (a running hash of the
    /// arguments, as a stretcher continues its stream): 4000 jobs posted in batches of 1 to 23
    /// into a helper holding 16 (so `post` collects when full), collected after each batch, with
    /// and without busy work of the render thread's own between posts. The hash after each batch
    /// is the one computed serially on this thread, and both threads ran jobs.
    func testJobsRunInTheOrderPostedWhoeverRunsThem() throws {
        final class Chain: @unchecked Sendable {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            var count = 0
        }
        func step(_ h: UInt64, _ x: Int) -> UInt64 { (h ^ UInt64(x)) &* 0x100_0000_01b3 }
        let chain = Chain()
        let helper = try RenderHelperThread(name: "ag-test-helper", capacity: 16) { x in
            chain.hash = step(chain.hash, x)
            chain.count += 1
        }
        var expected = chain.hash
        var posted = 0, batch = 0
        while posted < 4000 {
            let m = min(1 + (batch * 7) % 23, 4000 - posted)
            for j in 0..<m {
                let x = (posted + j) &* 2_654_435_761 % 1_000_003
                helper.post(x)
                expected = step(expected, x)
                if batch % 3 == 1 { busy(20) }
            }
            helper.collect()
            posted += m
            batch += 1
            XCTAssertEqual(chain.count, posted, "batch \(batch): every job posted ran before collect() returned")
            XCTAssertEqual(chain.hash, expected, "batch \(batch): the jobs ran in the order posted")
            if chain.hash != expected { break }
        }
        print("render helper: \(helper.jobsRun) of 4000 chained jobs on the helper")
        XCTAssertGreaterThan(helper.jobsRun, 0, "the helper ran jobs")
    }

    /// The handshake: jobs of 2 ms (longer than the render thread's 0.3 ms spin) that only the
    /// helper runs (``RenderHelperThread/testOnly_helperRunsEveryJob``), so that collect() sleeps
    /// on its semaphore and is woken: 50 rounds of 3 long jobs then 3 short ones; each collect()
    /// returns with its jobs done and none is left asleep (the test would hang).
    func testCollectSleepsAndIsWokenForALongJob() throws {
        RenderHelperThread.testOnly_helperRunsEveryJob.store(true, ordering: .relaxed)
        defer { RenderHelperThread.testOnly_helperRunsEveryJob.store(false, ordering: .relaxed) }
        final class Record: @unchecked Sendable { var done = 0 }
        let record = Record()
        let helper = try RenderHelperThread(name: "ag-test-helper", capacity: 4) { [self] microseconds in
            busy(Double(microseconds))
            record.done += 1
        }
        for round in 0..<50 {
            for _ in 0..<3 { helper.post(2000) }
            helper.collect()
            XCTAssertEqual(record.done, 6 * round + 3, "round \(round): the long jobs ran before collect() returned")
            for _ in 0..<3 { helper.post(1) }
            helper.collect()
            XCTAssertEqual(record.done, 6 * round + 6, "round \(round): the short jobs ran before collect() returned")
        }
        XCTAssertEqual(helper.jobsRun, 300)
    }
}
