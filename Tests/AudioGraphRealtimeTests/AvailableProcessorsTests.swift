// AvailableProcessors: the processor count against Foundation's ProcessInfo and nproc.
@testable import AudioGraphRealtime
import AudioGraphTesting
import Foundation
import XCTest

final class AvailableProcessorsTests: XCTestCase {
    func testTheCountIsFoundationsActiveProcessorCount() {
        // The independent reference: swift-corelibs-foundation's own reading of the affinity mask and cgroup quota.
        XCTAssertEqual(AvailableProcessors.count, ProcessInfo.processInfo.activeProcessorCount)
    }

    func testTheAffinityCountIsNprocs() throws {
        // nproc counts the CPUs of sched_getaffinity's mask, as this does.
        let nproc = try ReferenceScript.runTool(["nproc"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(AvailableProcessors.affinityCount, Int(nproc))
    }

    func testAQuotaIsRoundedUpToWholeCPUs() {
        XCTAssertEqual(AvailableProcessors.cpus(quota: 150_000, period: 100_000), 2)
        XCTAssertEqual(AvailableProcessors.cpus(quota: 50_000, period: 100_000), 1)
        XCTAssertEqual(AvailableProcessors.cpus(quota: 200_000, period: 100_000), 2)
        XCTAssertNil(AvailableProcessors.cpus(quota: -1, period: 100_000), "v1's 'no quota'")
    }
}
