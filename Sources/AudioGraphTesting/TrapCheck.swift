// Checking that a programmer error stops the program with one line: the test re-runs itself in a child.
import Foundation
import Glibc

/// Runs one XCTest test again in a child process, so a test can check that a call stops the
/// program (a `precondition`, the engine's programmer-error stop) and what it printed, without
/// stopping the test run.
///
/// The test does the forbidden call only when ``isChild`` is true, and otherwise calls
/// ``rerun(_:)`` with its own name and checks the result:
///
/// ```swift
/// func testTooManyFramesStops() throws {
///     if TrapCheck.isChild { _ = graph.render(frameCount: 10_000); return }
///     let r = try TrapCheck.rerun("AudioGraphCoreTests.AudioGraphTests/testTooManyFramesStops")
///     XCTAssertTrue(r.stoppedBySignal)
/// }
/// ```
///
/// Thread safety: call from the test's thread.
public enum TrapCheck {
    /// Whether this process is the child a ``rerun(_:)`` started.
    public static var isChild: Bool { ProcessInfo.processInfo.environment["AG_TRAP_CHECK_CHILD"] == "1" }

    /// What the child did.
    public struct Result: Sendable {
        /// Exit status, or 128 + the signal that ended it.
        public var status: Int32
        /// Everything the child wrote to stderr.
        public var standardError: String
        /// Whether a signal ended the child (a trap: SIGILL or SIGTRAP; an abort: SIGABRT).
        public var stoppedBySignal: Bool { status > 128 }
        /// The stderr lines that mention `text`.
        public func lines(containing text: String) -> [String] {
            standardError.split(separator: "\n").map(String.init).filter { $0.contains(text) }
        }
    }

    /// Runs `test` (`Module.Class/testMethod`) of this test bundle in a child process with
    /// ``isChild`` true and waits for it (at most `timeout` seconds, then it is killed).
    public static func rerun(_ test: String, timeout: Double = 60) throws -> Result {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { throw ChildProcessError.spawnFailed("/proc/self/exe", errno) }
        let executable = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let errPath = NSTemporaryDirectory() + "trapcheck-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        defer { unlink(errPath) }
        var environment = ProcessInfo.processInfo.environment
        environment["AG_TRAP_CHECK_CHILD"] = "1"
        let child = try ChildProcess(executable: executable, arguments: [test], environment: environment,
                                     standardError: errPath)
        let status = child.wait(timeout: timeout) ?? {
            child.terminate(signal: SIGKILL)
            return -1
        }()
        let text = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return Result(status: status, standardError: text)
    }
}
