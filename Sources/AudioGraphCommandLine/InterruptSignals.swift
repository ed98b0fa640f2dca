// Ctrl-C, SIGTERM and SIGHUP handling: the signal sets a flag that the long-running commands poll, and arms a deadline.
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
/// deadline of ``installInterruptHandlers(deadlineMessage:)``; the other stays quiet.
package let interruptReported = Atomic<Bool>(false)

/// How long a command that writes aside may take to stop by itself after a signal: a render
/// checks between slices, and a slice of a heavy graph can take seconds.
package let interruptDeadline: Int = 150_000_000  // nanoseconds

/// Whether a deadline is set (``installInterruptHandlers(deadlineMessage:)``, once, before the
/// handlers), and its one-shot timer (it raises SIGALRM), armed by the first signal. The timer's
/// ID may be 0, a null `timer_t`: the flag says whether there is one.
nonisolated(unsafe) private var hasDeadline = false
nonisolated(unsafe) private var deadlineTimer: timer_t?

/// The deadline's message with its newline, as a C string the handler writes (set with the timer).
nonisolated(unsafe) private var deadlineMessageBytes: UnsafeMutablePointer<CChar>?

/// Whether the first signal armed the timer (a later one leaves it running).
private let deadlineArmed = Atomic<Bool>(false)

/// Installs the handlers (atomic stores and `timer_settime` are async-signal-safe). A second
/// signal of the same kind while the first is being handled is absorbed: cleanup is never cut
/// short.
///
/// With `deadlineMessage` (commands that write files aside: render, plot), the first signal also
/// arms a one-shot timer; if the command has not reported the interruption ``interruptDeadline``
/// later — it is in the middle of a long slice, or drawing — the timer's SIGALRM handler removes
/// every temporary file (``PartialFiles/removeRegistered()``), writes the message and exits with
/// status 3. So a signal stops any render within 0.2 s and leaves nothing behind. A timer
/// rather than a thread that waits for the signal: starting and ending that thread was 0.14 ms,
/// a tenth of a short render's whole process (Docs/Performance.md "Start-up: at SoX's time").
/// Should the system refuse the timer, the command still stops at the end of its slice.
package func installInterruptHandlers(deadlineMessage: String? = nil) {
    if let deadlineMessage, !hasDeadline {
        var event = sigevent()
        event.sigev_notify = Int32(SIGEV_SIGNAL)
        event.sigev_signo = SIGALRM
        var timer: timer_t?
        if timer_create(CLOCK_MONOTONIC, &event, &timer) == 0 {
            deadlineMessageBytes = strdup(deadlineMessage + "\n")
            signal(SIGALRM) { _ in deadlinePassed() }
            deadlineTimer = timer
            hasDeadline = true
        }
    }
    signal(SIGINT) { _ in interrupt() }
    signal(SIGTERM) { _ in interrupt() }
    signal(SIGHUP) { _ in interrupt() }
}

private func interrupt() {
    interruptRequested.store(true, ordering: .relaxed)
    guard hasDeadline, !deadlineArmed.exchange(true, ordering: .relaxed) else { return }
    var spec = itimerspec()
    spec.it_value.tv_sec = interruptDeadline / 1_000_000_000
    spec.it_value.tv_nsec = interruptDeadline % 1_000_000_000
    timer_settime(deadlineTimer, 0, &spec, nil)
}

/// The deadline passed (SIGALRM): unless the command has reported the interruption, remove the
/// temporary files, say so and exit — all async-signal-safe (`unlink`, `write`, `_exit`).
private func deadlinePassed() {
    guard !interruptReported.exchange(true, ordering: .acquiringAndReleasing) else { return }
    PartialFiles.removeRegistered()
    if let message = deadlineMessageBytes { _ = write(2, message, strlen(message)) }
    _exit(ExitStatus.runtime)
}

/// The command's own report of an interruption: true when it is the one to print it; false when
/// the deadline is already exiting the process (the caller then waits for that exit).
package func claimInterruptReport() -> Bool {
    if !interruptReported.exchange(true, ordering: .acquiringAndReleasing) { return true }
    while true { pause() }
}
