// AvailableProcessors: the processor count against Foundation's ProcessInfo and nproc.
@testable import AudioGraphRealtime
import Foundation
import XCTest

final class AvailableProcessorsTests: XCTestCase {
    func testTheCountIsFoundationsActiveProcessorCount() {
        // The independent reference: swift-corelibs-foundation's own reading of the affinity mask and cgroup quota.
        XCTAssertEqual(AvailableProcessors.count, ProcessInfo.processInfo.activeProcessorCount)
    }

    func testTheAffinityCountIsNprocs() throws {
        // nproc counts the CPUs of sched_getaffinity's mask, as this does.
        guard let nproc = ["/usr/bin/nproc", "/bin/nproc"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("nproc is not installed")
        }
        XCTAssertEqual(AvailableProcessors.affinityCount, Int(try run(nproc, [])))
    }

    func testAQuotaIsRoundedUpToWholeCPUs() {
        XCTAssertEqual(AvailableProcessors.cpus(quota: 150_000, period: 100_000), 2)
        XCTAssertEqual(AvailableProcessors.cpus(quota: 50_000, period: 100_000), 1)
        XCTAssertEqual(AvailableProcessors.cpus(quota: 200_000, period: 100_000), 2)
        XCTAssertNil(AvailableProcessors.cpus(quota: -1, period: 100_000), "v1's 'no quota'")
    }

    private func run(_ tool: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
