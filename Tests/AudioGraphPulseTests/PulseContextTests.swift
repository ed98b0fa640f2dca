// Tests of PulseContext: connecting, the no-server error, and detecting the server's death.
import AudioGraphPulse
import AudioGraphTesting
import Foundation
import XCTest

final class PulseContextTests: XCTestCase {
    func testNoServerIsAClearOneLineError() throws {
        let missing = "unix:/tmp/ag-no-such-dir-\(getpid())/native"
        let start = Date()
        XCTAssertThrowsError(try PulseContext(server: missing)) { error in
            guard case let .noServer(server, reason) = error as? PulseError else {
                return XCTFail("expected noServer, got \(error)")
            }
            XCTAssertEqual(server, missing)
            XCTAssertFalse(reason.isEmpty)
            let line = "\(error)"
            XCTAssertFalse(line.contains("\n"))
            XCTAssertTrue(line.hasPrefix("no PulseAudio server at \(missing)"), line)
            print("no server: \(line)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2, "failing must be quick")
    }

    func testConnectsAndDetectsServerDeath() throws {
        let server = try PulseTestServer()
        defer { server.stop() }
        let context = try PulseContext(server: server.serverString)
        XCTAssertTrue(context.isConnected)
        XCTAssertNil(context.failure)
        let died = expectation(description: "failure handler")
        context.setFailureHandler { _ in died.fulfill() }
        let killedAt = Date()
        server.kill()
        wait(for: [died], timeout: 1)
        print(String(format: "context failure after %.1f ms: %@", Date().timeIntervalSince(killedAt) * 1000,
                     context.failure.map { "\($0)" } ?? "none"))
        XCTAssertFalse(context.isConnected)
        guard case .connectionLost = context.failure else { return XCTFail("got \(String(describing: context.failure))") }
        context.close()
        context.close()
    }

    func testCloseIsIdempotentAndJoinsTheMainloopThread() throws {
        let server = try PulseTestServer()
        defer { server.stop() }
        let before = ProcessThreads.count
        let context = try PulseContext(server: server.serverString)
        XCTAssertEqual(ProcessThreads.settle(at: before + 1), before + 1, "the mainloop thread")
        context.close()
        context.close()
        XCTAssertEqual(ProcessThreads.settle(at: before), before, "closing joins the mainloop thread")
    }

    /// A libpulse that cannot be loaded (the loader's test hook) is a one-line error naming it.
    func testAMissingLibpulseIsAOneLineError() {
        setenv("AG_LAZY_LIBRARY_MISSING", "libpulse.so.0", 1)
        defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
        XCTAssertThrowsError(try PulseContext(server: "unix:/tmp/ag-no-such-dir-\(getpid())/native")) { error in
            let reason = "libpulse.so.0: cannot open shared object file (AG_LAZY_LIBRARY_MISSING)"
            XCTAssertEqual(error as? PulseError, .libraryMissing(library: "libpulse", reason: reason))
            XCTAssertEqual("\(error)", "cannot load libpulse: \(reason)")
        }
    }
}
