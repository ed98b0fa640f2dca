// Ctrl-C handling for the live commands: SIGINT sets a flag the control loop polls.
import Foundation
import Synchronization

/// Set by SIGINT/SIGTERM; the live commands poll it and stop cleanly.
let interruptRequested = Atomic<Bool>(false)

/// Installs the handlers (an atomic store is async-signal-safe).
func installInterruptHandlers() {
    signal(SIGINT) { _ in interruptRequested.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in interruptRequested.store(true, ordering: .relaxed) }
}
