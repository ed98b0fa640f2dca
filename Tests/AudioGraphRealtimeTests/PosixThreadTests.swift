// Tests of PosixThread: the thread runs, is named, gets the scheduling asked for, and joins or detaches.
import AudioGraphRealtime
import Foundation
import Synchronization
import XCTest

#if canImport(Glibc)
import Glibc
#endif

final class PosixThreadTests: XCTestCase {
    /// The name a thread gave itself in /proc (what `ps -L` shows).
    private static func nameOfCurrentThread() -> String {
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let n = read(fd, &bytes, 32)
        return String(decoding: bytes[0..<max(0, n)], as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    func testRunsTheBodyOnItsOwnNamedThreadAndJoinWaitsForIt() throws {
        final class Seen: @unchecked Sendable { var name = ""; var thread: UInt = 0; var finished = false }
        let seen = Seen()
        let thread = try PosixThread(name: "ag-test-a-very-long-name") {
            usleep(20_000)
            seen.name = PosixThreadTests.nameOfCurrentThread()
            seen.thread = UInt(pthread_self())
            seen.finished = true
        }
        thread.join()
        XCTAssertTrue(seen.finished, "join returned before the body ended")
        XCTAssertEqual(seen.name, "ag-test-a-very-", "the name is cut to 15 bytes")
        XCTAssertNotEqual(seen.thread, UInt(pthread_self()))
        thread.join()   // idempotent
    }

    /// As root (CI) the system grants SCHED_FIFO: the thread runs at the priority asked for;
    /// a normal thread keeps SCHED_OTHER.
    func testRealtimeSchedulingIsAskedForAndReported() throws {
        let policy = Atomic<Int32>(-1), priority = Atomic<Int32>(-1)
        let thread = try PosixThread(name: "ag-test-rt", scheduling: .realtime(priority: PosixThread.renderPriority)) {
            var p: Int32 = 0
            var param = sched_param()
            pthread_getschedparam(pthread_self(), &p, &param)
            policy.store(p, ordering: .relaxed)
            priority.store(param.sched_priority, ordering: .relaxed)
        }
        thread.join()
        if thread.isRealtime {
            XCTAssertTrue([SCHED_FIFO, SCHED_RR].contains(policy.load(ordering: .relaxed)))
            XCTAssertEqual(priority.load(ordering: .relaxed), PosixThread.renderPriority)
        } else {
            XCTAssertEqual(policy.load(ordering: .relaxed), SCHED_OTHER, "not granted: the normal policy stays")
        }
        XCTAssertEqual(geteuid() == 0, thread.isRealtime, "root is granted SCHED_FIFO, others (RLIMIT_RTPRIO 0) are not")

        let normal = try PosixThread(name: "ag-test-normal") {
            var p: Int32 = 0
            var param = sched_param()
            pthread_getschedparam(pthread_self(), &p, &param)
            policy.store(p, ordering: .relaxed)
        }
        normal.join()
        XCTAssertFalse(normal.isRealtime)
        XCTAssertEqual(policy.load(ordering: .relaxed), SCHED_OTHER)
    }

    /// An owner released from inside its own thread's body joins "itself": that detaches instead
    /// of deadlocking, and the thread still ends.
    func testJoinOnTheThreadItselfDetachesInsteadOfDeadlocking() throws {
        final class Owner: @unchecked Sendable { var thread: PosixThread? }
        let owner = Owner()
        let mayGo = Atomic<Bool>(false), ended = Atomic<Bool>(false), wasCurrent = Atomic<Bool>(false)
        owner.thread = try PosixThread(name: "ag-test-self") {
            while !mayGo.load(ordering: .acquiring) { usleep(1000) }
            wasCurrent.store(owner.thread?.isCurrent ?? false, ordering: .relaxed)
            owner.thread?.join()
            owner.thread = nil
            ended.store(true, ordering: .releasing)
        }
        XCTAssertFalse(owner.thread?.isCurrent ?? true)
        mayGo.store(true, ordering: .releasing)
        let deadline = Date().addingTimeInterval(5)
        while !ended.load(ordering: .acquiring) && Date() < deadline { usleep(1000) }
        XCTAssertTrue(ended.load(ordering: .acquiring), "the thread deadlocked joining itself")
        XCTAssertTrue(wasCurrent.load(ordering: .relaxed))
    }

    /// A detached thread ends by itself; the object can go away first.
    func testDetachedThreadEndsByItself() throws {
        let ended = Atomic<Bool>(false)
        try PosixThread(name: "ag-test-detach") {
            usleep(10_000)
            ended.store(true, ordering: .releasing)
        }.detach()
        let deadline = Date().addingTimeInterval(5)
        while !ended.load(ordering: .acquiring) && Date() < deadline { usleep(1000) }
        XCTAssertTrue(ended.load(ordering: .acquiring))
    }

    func testStartErrorNamesTheReason() {
        XCTAssertEqual(PosixThread.StartError(code: EAGAIN).description,
                       "cannot start a thread: Resource temporarily unavailable (error \(EAGAIN))")
    }
}
