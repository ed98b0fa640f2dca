// Ctrl-C, SIGTERM and SIGHUP handling: the signal sets a flag that the long-running commands poll.
import AudioGraphOffline
import AudioGraphRealtime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Set by SIGINT, SIGTERM or SIGHUP; `render`, `play` and `meter` poll it and stop cleanly
/// (render removes its temporary files and exits with 3).
package let interruptRequested = Atomic<Bool>(false)

/// Set by whoever says "interrupted" first: the command, when it stops by itself, or the
/// deadline thread of ``installInterruptHandlers(deadlineMessage:)``; the other stays quiet.
package let interruptReported = Atomic<Bool>(false)

/// Posted by the handlers (`sem_post` is async-signal-safe) to wake the deadline thread.
nonisolated(unsafe) private let interruptSemaphore: UnsafeMutablePointer<sem_t> = {
    let s = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    sem_init(s, 0, 0)
    return s
}()

/// How long a command that writes aside may take to stop by itself after a signal: a render
/// checks between slices, and a slice of a heavy graph can take seconds.
package let interruptDeadline: useconds_t = 150_000

/// Installs the handlers (an atomic store and `sem_post` are async-signal-safe). A second signal
/// of the same kind while the first is being handled is absorbed: cleanup is never cut short.
///
/// With `deadlineMessage` (commands that write files aside: render, plot), a thread waits for
/// the signal; if the command has not reported the interruption ``interruptDeadline`` later —
/// it is in the middle of a long slice, or drawing — the thread removes every temporary file
/// (``PartialFiles/removeRegistered()``), prints the message and exits with status 3. So a
/// signal stops any render within 0.2 s and leaves nothing behind.
package func installInterruptHandlers(deadlineMessage: String? = nil) {
    _ = interruptSemaphore
    signal(SIGINT) { _ in interrupt() }
    signal(SIGTERM) { _ in interrupt() }
    signal(SIGHUP) { _ in interrupt() }
    guard let deadlineMessage else { return }
    let watcher = try? PosixThread(name: "ag-interrupt") {
        while sem_wait(interruptSemaphore) != 0 {}
        usleep(interruptDeadline)
        guard !interruptReported.exchange(true, ordering: .acquiringAndReleasing) else { return }
        PartialFiles.removeRegistered()
        Diagnostics.writeToStandardError(deadlineMessage + "\n")
        _exit(ExitStatus.runtime)
    }
    watcher?.detach()
}

/// The command's own report of an interruption: true when it is the one to print it; false when
/// the deadline thread is already exiting (the caller then waits for that exit).
package func claimInterruptReport() -> Bool {
    if !interruptReported.exchange(true, ordering: .acquiringAndReleasing) { return true }
    while true { pause() }
}

private func interrupt() {
    interruptRequested.store(true, ordering: .relaxed)
    sem_post(interruptSemaphore)
}
