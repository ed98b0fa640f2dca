// A connection to a PulseAudio server, driven by libpulse's threaded mainloop.
import AudioGraphRealtime
import AudioGraphCore
import CPulse
import CPulseShim
import Glibc
import Synchronization

/// One connection to a PulseAudio server: a `pa_threaded_mainloop` (libpulse's own event thread)
/// and a `pa_context` on it.
///
/// `init` connects (to the default server, or to a server string such as
/// `unix:/run/user/0/pulse/native`) and waits until the context is ready; it throws
/// `PulseError.noServer` when nothing answers (libpulse never autospawns a daemon for us).
/// Afterwards a state callback on the mainloop thread watches the context: when the server dies
/// the context fails, `isConnected` turns false, `failure` holds the reason and the failure
/// handler (if any) runs — within milliseconds of the socket closing. Streams created on the
/// context see the same failure through their own state callbacks.
///
/// Thread safety: all package members may be called from any thread except libpulse's mainloop
/// thread (i.e. not from inside a libpulse callback), because they take the mainloop lock and
/// may wait for the server. None of them is real-time safe. `close()` is idempotent and is also
/// done by `deinit`.
package final class PulseContext: @unchecked Sendable {
    /// The server string connected to, or nil for the default server.
    package let server: String?

    // MARK: Immutable after init (libpulse objects; use under the mainloop lock)
    let mainloop: OpaquePointer
    let context: OpaquePointer

    // MARK: Shared (atomic / mutex)
    private let connected = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    private let state = ControlLock<(failure: PulseError?, handler: (@Sendable (PulseError) -> Void)?)>((nil, nil))

    /// Connects to `server` (nil: libpulse's default, i.e. `$PULSE_SERVER` or the user's runtime
    /// directory) and waits up to `timeout` seconds until the context is ready.
    ///
    /// - Throws: `PulseError.libraryMissing` when libpulse cannot be loaded,
    ///   `PulseError.noServer` when no server answers, `.timedOut` when it does not
    ///   become ready in time.
    package init(server: String? = nil, applicationName: String = "AudioGraph", timeout: Double = 5) throws(PulseError) {
        self.server = server
        // For messages: the address libpulse will try.
        let address = server ?? getenv("PULSE_SERVER").map { String(cString: $0) } ?? "the default address"
        if let reason = LazyLibrary.pulse.loadFailure { throw .libraryMissing(library: LazyLibrary.pulse.name, reason: reason) }
        guard let loop = pa_threaded_mainloop_new() else {
            throw .noServer(server: address, reason: "cannot create a mainloop")
        }
        guard let ctx = pa_context_new(pa_threaded_mainloop_get_api(loop), applicationName) else {
            pa_threaded_mainloop_free(loop)
            throw .noServer(server: address, reason: "cannot create a context")
        }
        mainloop = loop
        context = ctx
        pa_context_set_state_callback(ctx, pulseContextStateCallback, Unmanaged.passUnretained(self).toOpaque())
        if pa_threaded_mainloop_start(loop) < 0 {
            pa_context_set_state_callback(ctx, nil, nil)
            closed.store(true, ordering: .releasing)
            throw .noServer(server: address, reason: "cannot start the mainloop thread") // deinit frees
        }
        pa_threaded_mainloop_lock(loop)
        var error: PulseError?
        if pa_context_connect(ctx, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            error = .noServer(server: address, reason: Self.errorText(pa_context_errno(ctx)))
        } else {
            let ready = waitLocked(timeout: timeout) {
                let s = pa_context_get_state(ctx)
                return s == PA_CONTEXT_READY || ag_pa_context_is_good(s) == 0
            }
            let s = pa_context_get_state(ctx)
            if s == PA_CONTEXT_READY {
                connected.store(true, ordering: .releasing)
                // The mainloop thread moves audio between our rings and the server: ask for
                // real-time scheduling for it too (ignored where not permitted).
                _ = pa_context_rttime_new(ctx, pa_rtclock_now(), pulsePromoteCallback, nil)
            } else if !ready {
                error = .timedOut(operation: "connect to \(server ?? "the default server")")
            } else {
                error = .noServer(server: address, reason: Self.errorText(pa_context_errno(ctx)))
            }
        }
        pa_threaded_mainloop_unlock(loop)
        if let error {
            close()
            throw error  // deinit frees the context and the mainloop
        }
    }

    deinit {
        close()
        pa_context_unref(context)
        pa_threaded_mainloop_free(mainloop)
    }

    /// True while the context is connected and healthy.
    package var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// Why the connection ended, once it has (nil while connected or after a clean `close`).
    package var failure: PulseError? { state.withLock { $0.failure } }

    /// Sets a handler called once, on libpulse's mainloop thread, when the connection fails after
    /// it was established. It must return quickly and must not call back into this context.
    package func setFailureHandler(_ handler: (@Sendable (PulseError) -> Void)?) {
        state.withLock { $0.handler = handler }
    }

    /// Disconnects and stops (joins) the mainloop thread. Idempotent. Stop the streams on this
    /// context first; a stream stopped afterwards still tears down cleanly.
    package func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connected.store(false, ordering: .releasing)
        pa_threaded_mainloop_lock(mainloop)
        pa_context_set_state_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        // The context and the mainloop are freed in deinit: streams may still take the (now
        // idle) mainloop lock to tear themselves down after a close.
    }

    // MARK: Internal helpers for streams and device queries

    /// Runs `body` holding the mainloop lock. Not from the mainloop thread's callbacks.
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return try body()
    }

    /// With the lock held: waits (releasing the lock meanwhile) until `done()` or `timeout`
    /// seconds pass. Every callback that may change `done()` must call `signal()`. Returns `done()`.
    func waitLocked(timeout: Double, until done: () -> Bool) -> Bool {
        if done() { return true }
        let timer = PulseTimeoutFlag(mainloop: mainloop)
        let usec = pa_rtclock_now() + pa_usec_t(max(0, timeout) * 1_000_000)
        let event = pa_context_rttime_new(context, usec, pulseTimeoutCallback, Unmanaged.passUnretained(timer).toOpaque())
        defer {
            if let event, let free = pa_threaded_mainloop_get_api(mainloop).pointee.time_free { free(event) }
            withExtendedLifetime(timer) {}
        }
        while !done() && !timer.fired {
            pa_threaded_mainloop_wait(mainloop)
        }
        return done()
    }

    /// Wakes `waitLocked` (from a libpulse callback on the mainloop thread).
    func signal() {
        pa_threaded_mainloop_signal(mainloop, 0)
    }

    /// With the lock held: waits for `operation` to finish (or the connection to fail), then
    /// unreferences it. Returns false on timeout.
    func waitForOperationLocked(_ operation: OpaquePointer?, timeout: Double = 5) -> Bool {
        guard let operation else { return false }
        defer { pa_operation_unref(operation) }
        return waitLocked(timeout: timeout) {
            pa_operation_get_state(operation) != PA_OPERATION_RUNNING
        }
    }

    /// The connection-lost error for the context's current error number.
    func lostError() -> PulseError {
        .connectionLost(reason: Self.errorText(pa_context_errno(context)))
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: pa_strerror(code))
    }

    /// Called on the mainloop thread by the state callback.
    fileprivate func stateChanged() {
        let s = pa_context_get_state(context)
        if ag_pa_context_is_good(s) == 0, connected.exchange(false, ordering: .acquiringAndReleasing) {
            let error = lostError()
            let handler = state.withLock { st -> (@Sendable (PulseError) -> Void)? in
                st.failure = error
                return st.handler
            }
            handler?(error)
        }
        signal()
    }
}

/// A flag set by a libpulse time event when a wait times out (mainloop thread writes it under
/// the mainloop lock, the waiter reads it under the same lock).
final class PulseTimeoutFlag {
    let mainloop: OpaquePointer
    var fired = false
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}

private func pulseTimeoutCallback(_ api: UnsafeMutablePointer<pa_mainloop_api>?, _ event: OpaquePointer?,
                                  _ tv: UnsafePointer<timeval>?, _ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    let flag = Unmanaged<PulseTimeoutFlag>.fromOpaque(userdata).takeUnretainedValue()
    flag.fired = true
    pa_threaded_mainloop_signal(flag.mainloop, 0)
}

private func pulsePromoteCallback(_ api: UnsafeMutablePointer<pa_mainloop_api>?, _ event: OpaquePointer?,
                                  _ tv: UnsafePointer<timeval>?, _ userdata: UnsafeMutableRawPointer?) {
    PosixThread.promoteCurrentThread(priority: 19)
    if let event, let free = api?.pointee.time_free { free(event) }
}

private func pulseContextStateCallback(_ context: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    Unmanaged<PulseContext>.fromOpaque(userdata).takeUnretainedValue().stateChanged()
}
