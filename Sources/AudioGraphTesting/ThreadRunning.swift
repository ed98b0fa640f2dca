// Running a test body on a fresh thread, and with render-thread lock violations counted instead of trapping.
import AudioGraphRealtime

/// Runs `body` on a new thread and waits for it to end (a thread of its own, so a render-thread
/// mark set inside cannot leak into the caller's).
public func runOnNewThread(_ body: @escaping @Sendable () -> Void) {
    do {
        try PosixThread(name: "ag-test-thread", body: body).join()
    } catch {
        preconditionFailure("could not start a test thread: \(error)")
    }
}

/// Runs `body` with ``RenderThreadMark/lockViolations`` reset to 0 and a lock taken on a marked thread
/// counted instead of trapping; the trapping setting is restored afterwards.
public func countingLockViolations<R>(_ body: () throws -> R) rethrows -> R {
    let saved = RenderThreadMark.trapsOnViolation
    RenderThreadMark.trapsOnViolation = false
    RenderThreadMark.resetLockViolations()
    defer { RenderThreadMark.trapsOnViolation = saved }
    return try body()
}
