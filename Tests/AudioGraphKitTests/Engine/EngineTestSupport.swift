// What the engine tests share: a private PulseAudio server as the default one, and the programmer-error check.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

/// A test case whose tests run against a private PulseAudio server made the process's default
/// (its environment variables set for the test, restored after), as an application finds one.
class DefaultPulseServerTestCase: XCTestCase {
    var server: PulseTestServer!
    private var savedEnvironment: [String: String?] = [:]

    override func setUpWithError() throws {
        server = try PulseTestServer()
        for (key, value) in server.environment {
            savedEnvironment[key] = ProcessInfo.processInfo.environment[key]
            setenv(key, value, 1)
        }
    }

    override func tearDown() {
        for (key, value) in savedEnvironment {
            if let value { setenv(key, value, 1) } else { unsetenv(key) }
        }
        savedEnvironment = [:]
        server?.stop()
        server = nil
    }
}

/// Runs `body` in a child copy of test `test` (`Class/testMethod` of AudioGraphKitTests) and
/// checks that it stopped with exactly one `AudioEngine: ` line holding every piece of `expected`.
func assertEngineStops(_ test: String, expected: [String], file: StaticString = #filePath, line: UInt = #line,
                       _ body: () throws -> Void) throws {
    if TrapCheck.isChild {
        try body()
        return
    }
    let r = try TrapCheck.rerun("AudioGraphKitTests.\(test)")
    XCTAssertTrue(r.stoppedBySignal, "status \(r.status): \(r.standardError)", file: file, line: line)
    let lines = r.lines(containing: "AudioEngine: ")
    XCTAssertEqual(lines.count, 1, r.standardError, file: file, line: line)
    for piece in expected {
        XCTAssertTrue(lines.first?.contains(piece) == true, "\(piece) missing from: \(lines)", file: file, line: line)
    }
}
