// The first failure of a running Pulse stream and the handler to tell, shared by playback and capture.
import AudioGraphRealtime
import AudioGraphCore

/// Holds the first fault a running stream met and the handler the owner set for it.
///
/// Thread safety: every member may be used from any thread (one mutex, held only to copy a value;
/// never taken on the render thread). The handler is returned by `record` and called by the
/// caller outside the lock.
final class PulseStreamFault: Sendable {
    /// A fault handler: called once, on libpulse's mainloop thread.
    typealias Handler = @Sendable (PulseError) -> Void

    // MARK: Shared (mutex)
    private let state = ControlLock<(fault: PulseError?, handler: Handler?)>((nil, nil))

    /// The recorded fault, nil when none.
    var fault: PulseError? { state.withLock { $0.fault } }

    /// Replaces the handler.
    func setHandler(_ handler: Handler?) {
        state.withLock { $0.handler = handler }
    }

    /// Forgets the recorded fault (at start).
    func clear() {
        state.withLock { $0.fault = nil }
    }

    /// Records `error` if no fault was recorded yet and returns the handler to call then; nil
    /// (nothing to call) when a fault was already recorded.
    func record(_ error: PulseError) -> Handler? {
        state.withLock { f -> Handler? in
            guard f.fault == nil else { return nil }
            f.fault = error
            return f.handler
        }
    }
}
