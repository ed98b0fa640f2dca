// Running a test body on a fresh thread, and with render-thread lock violations counted instead of trapping.
import AudioGraphRealtime
import Foundation

/// Runs `body` on a new thread and waits for it to end (a thread of its own, so a render-thread
/// mark set inside cannot leak into the caller's).
public func runOnNewThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let t = Thread {
        body()
        done.signal()
    }
    t.start()
    done.wait()
}

/// Runs `body` with ``RenderThread/lockViolations`` reset to 0 and a lock taken on a marked thread
/// counted instead of trapping; the trapping setting is restored afterwards.
public func countingLockViolations<R>(_ body: () throws -> R) rethrows -> R {
    let saved = RenderThread.trapsOnViolation
    RenderThread.trapsOnViolation = false
    RenderThread.resetLockViolations()
    defer { RenderThread.trapsOnViolation = saved }
    return try body()
}
