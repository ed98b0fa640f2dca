// Tests of Qt-based plugins' lifetime: synthv1 made and freed many times in a row, on a busy machine, in a child process, never aborts it.
import Foundation
import Synchronization
import XCTest
@testable import AudioGraphPlugins

final class LV2WorldResidentTests: XCTestCase {
    static let synthv1 = "http://synthv1.sourceforge.net/lv2"
    /// Set in the child's environment to the number of instances it makes and frees.
    static let childVariable = "AG_TEST_LV2_CHURN_INSTANCES"

    /// synthv1 (Qt: a QApplication and one process-wide scheduler QThread shared by its
    /// instances) instantiated and freed 300 times in a row through ``LV2World/instantiate``
    /// while busy threads hold every core. synthv1 0.9.29 starts its scheduler thread with the
    /// first instance and deletes it with the last one; deleted before the new thread has run
    /// (common on a loaded machine), Qt ends the process: "QThread: Destroyed while thread is
    /// still running" (abort, signal 6). Checked two ways: the child process ends normally
    /// with no such line (the symptom, seen in about half the runs on the loaded 2-core VM
    /// before the fix), and after every cycle the same one scheduler thread is alive (the
    /// cause, deterministic: before the fix no QThread was left after any cycle, each instance
    /// started and destroyed its own). Run in a child process (this test binary, filtered to
    /// this test, with ``childVariable`` set), so that an abort is this test's failure, not the
    /// end of the suite.
    func testSynthv1MadeAndFreedManyTimesOnABusyMachineNeverAbortsTheProcess() throws {
        if let count = ProcessInfo.processInfo.environment[Self.childVariable].flatMap({ Int($0) }) {
            try churn(count)
            return
        }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["AudioGraphPluginsTests.LV2WorldResidentTests/testSynthv1MadeAndFreedManyTimesOnABusyMachineNeverAbortsTheProcess"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = "300"
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        let lines = text.split(separator: "\n")
        let qtLines = lines.filter { $0.hasPrefix("QThread") }
        let report = lines.first { $0.hasPrefix("synthv1 churn:") }
        print("child: \(child.terminationReason == .uncaughtSignal ? "signal" : "exit") \(child.terminationStatus); \(report ?? "no report"); Qt thread lines: \(qtLines)")
        XCTAssertEqual(child.terminationReason, .exit, "the child ended by a signal: \(qtLines.joined(separator: "; "))")
        XCTAssertEqual(child.terminationStatus, 0)
        XCTAssertTrue(qtLines.isEmpty, qtLines.joined(separator: "\n"))
        XCTAssertEqual(report, "synthv1 churn: 300 cycles, 1 scheduler thread in all, 0 cycles leaving none")
    }

    /// The `DT_NEEDED` list read from synthv1's and swh amp's binaries is readelf's (binutils),
    /// in order; synthv1's links Qt, amp's does not; a file that is not ELF has none.
    func testNeededLibrariesAreReadelfsAndTellQtPlugins() throws {
        let world = try LV2World.shared()
        for (uri, qt) in [(Self.synthv1, true), ("http://plugin.org.uk/swh-plugins/amp", false)] {
            let path = try XCTUnwrap(world.binaryPath(uri: uri))
            let readelf = Process()
            readelf.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
            readelf.arguments = ["-d", path]
            let pipe = Pipe()
            readelf.standardOutput = pipe
            try readelf.run()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            readelf.waitUntilExit()
            let expected = text.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line -> String? in
                guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
                return String(line[line.index(after: open)..<close])
            }
            XCTAssertFalse(expected.isEmpty, path)
            XCTAssertEqual(LV2World.neededLibraries(ofBinary: path), expected, path)
            XCTAssertEqual(LV2World.linksQt(binary: path), qt, path)
        }
        XCTAssertEqual(LV2World.neededLibraries(ofBinary: "/usr/lib/lv2/synthv1.lv2/manifest.ttl"), [])
        XCTAssertEqual(LV2World.neededLibraries(ofBinary: "/nonexistent/x.so"), [])
    }

    /// The child's body: `count` synthv1 instances made and freed one after the other, with one
    /// busy thread per core; after each cycle, the ids of the process's threads named QThread
    /// (synthv1's scheduler; Qt names a thread after its class) are read from /proc/self/task.
    private func churn(_ count: Int) throws {
        final class Stop: Sendable { let flag = Atomic<Bool>(false) }
        let world = try LV2World.shared()
        let stop = Stop()
        for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
            Thread {
                var x = 0.0
                while !stop.flag.load(ordering: .relaxed) { x = (x + 1).squareRoot() }
            }.start()
        }
        defer { stop.flag.store(true, ordering: .relaxed) }
        var seen = Set<String>(), leavingNone = 0
        for _ in 0..<count {
            _ = try world.instantiate(uri: Self.synthv1, sampleRate: 48000)
            let alive = try Self.threads(named: "QThread")
            seen.formUnion(alive)
            if alive.isEmpty { leavingNone += 1 }
        }
        print("synthv1 churn: \(count) cycles, \(seen.count) scheduler thread\(seen.count == 1 ? "" : "s") in all, \(leavingNone) cycles leaving none")
    }

    /// The ids of this process's threads whose name (`comm`) is `name`.
    private static func threads(named name: String) throws -> Set<String> {
        let ids = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        return Set(ids.filter { id in
            // A thread may end between the listing and the read.
            (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines) == name
        })
    }
}
