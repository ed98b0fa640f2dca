// Tests that the scheduling probe wakes at its period and measures a stall of its own thread.
import AudioGraphTesting
import XCTest

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
        XCTAssertGreaterThanOrEqual(report.maximumLateness, 0)
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
}
