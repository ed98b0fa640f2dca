// Base class for Pulse tests that need a private PulseAudio daemon for every test method.
import AudioGraphPulse
import AudioGraphTesting
import Foundation
import XCTest

/// Starts a private `PulseTestServer` before each test and stops it after (so a test may kill
/// or disturb its daemon freely). Subclasses that must skip before the daemon starts override
/// `setUpWithError`, skip, then call `super`.
///
/// Thread safety: XCTest calls setUp, the test and tearDown on one thread; `server` belongs to it.
class PulseServerTestCase: XCTestCase {
    // MARK: Test thread only
    /// The running test's daemon (nil outside a test).
    var server: PulseTestServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try PulseTestServer()
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    /// Kills the daemon (SIGKILL) and polls `fault` every millisecond until it reports something,
    /// for at most 3 s. Returns the seconds from the kill until the fault was seen (or gave up).
    func killServerAndWait(forFault fault: () -> PulseError?) -> Double {
        let killedAt = Date()
        server.kill()
        while fault() == nil && Date().timeIntervalSince(killedAt) < 3 { usleep(1000) }
        return Date().timeIntervalSince(killedAt)
    }
}
