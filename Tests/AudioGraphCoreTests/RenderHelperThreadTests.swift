// Tests of RenderHelperThread: every job runs exactly once, on the helper or taken back by the render thread.
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
    /// Each job runs exactly once with its slice's argument, its result visible after `finish()`,
    /// and no job runs again later.
    func testEveryJobRunsExactlyOnceWhoeverRunsIt() throws {
        final class Record: @unchecked Sendable {
            var seen: [Int] = Array(repeating: 0, count: 3000)
        }
        let record = Record()
        var helper: RenderHelperThread? = try RenderHelperThread(name: "ag-test-helper") { i in record.seen[i] += 1 }
        for i in 0..<3000 {
            helper!.begin(i)
            if i >= 1500 { busy(100) }
            helper!.finish()
            XCTAssertEqual(record.seen[i], 1, "slice \(i): the job ran once before finish() returned")
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
}
