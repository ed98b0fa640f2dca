// Ctrl-C, SIGTERM and SIGHUP handling: the signal sets a flag that the long-running commands poll.
import Foundation
import Synchronization

/// Set by SIGINT, SIGTERM or SIGHUP; `render`, `play` and `meter` poll it and stop cleanly
/// (render removes its temporary files and exits with 3).
let interruptRequested = Atomic<Bool>(false)

/// Installs the handlers (an atomic store is async-signal-safe). A second signal of the same
/// kind while the first is being handled is absorbed: cleanup is never cut short.
func installInterruptHandlers() {
    signal(SIGINT) { _ in interruptRequested.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in interruptRequested.store(true, ordering: .relaxed) }
    signal(SIGHUP) { _ in interruptRequested.store(true, ordering: .relaxed) }
}
