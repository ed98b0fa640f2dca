// The one way the package starts a thread of its own: named, optionally real-time, joined or detached.
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX thread running one closure: the render thread of a playback stream, a disk reader,
/// a completion notifier, a tap's delivery thread, an LV2 worker, an offline render worker.
///
/// `init` starts the thread (named, so `ps -L` and `/proc/self/task/N/comm` show what it is) and
/// throws when the system refuses one; ``join()`` waits for it to end, ``detach()`` lets it end by
/// itself. With ``Scheduling/realtime(priority:)`` the thread first asks for `SCHED_FIFO` at that
/// priority (falling back to `SCHED_RR`); when the system does not permit it (no `CAP_SYS_NICE`,
/// `RLIMIT_RTPRIO` 0) it keeps the normal policy, and ``isRealtime`` says which happened.
///
/// The closure is held by the thread only (released when it returns), never by this object, so a
/// closure that captures the owner of the `PosixThread` makes no reference cycle.
///
/// Thread safety: `init`, ``join()`` and ``detach()`` belong to one control thread; ``join()`` and
/// ``detach()`` are idempotent, and ``join()`` called on the thread itself (its owner released
/// from inside its own closure) detaches instead of waiting for itself. ``isRealtime`` and
/// ``isCurrent`` may be read from any thread. Not real-time safe: creating a thread allocates.
package final class PosixThread: @unchecked Sendable {
    /// The scheduling a new thread asks for.
    package enum Scheduling: Sendable, Equatable {
        /// The normal time-sharing policy.
        case normal
        /// `SCHED_FIFO` (else `SCHED_RR`) at `priority`, when the system allows it.
        case realtime(priority: Int32)
    }

    /// The `SCHED_FIFO` priority a driver asks for its render thread. Probes that must see the
    /// engine starve the machine run above it.
    package static let renderPriority: Int32 = 20

    /// Why a thread was not started: `pthread_create`'s error number (`EAGAIN`: too many threads).
    package struct StartError: Error, Equatable, CustomStringConvertible {
        package let code: Int32
        package init(code: Int32) { self.code = code }
        package var description: String { "cannot start a thread: \(String(cString: strerror(code))) (error \(code))" }
    }

    // MARK: Control thread only
    private var thread: pthread_t?

    // MARK: Shared (atomic)
    private let state: State

    private final class State: Sendable {
        let realtime = Atomic<Bool>(false)
    }

    private final class Start {
        let body: @Sendable () -> Void
        let name: String
        let scheduling: Scheduling
        let state: State
        init(body: @escaping @Sendable () -> Void, name: String, scheduling: Scheduling, state: State) {
            self.body = body; self.name = name; self.scheduling = scheduling; self.state = state
        }
    }

    /// Starts a thread named `name` (at most 15 bytes are kept) that runs `body`, then ends.
    /// - Throws: ``StartError`` when `pthread_create` fails (nothing was started).
    package init(name: String, scheduling: Scheduling = .normal,
                 body: @escaping @Sendable () -> Void) throws(StartError) {
        let state = State()
        self.state = state
        let start = Unmanaged.passRetained(Start(body: body, name: name, scheduling: scheduling, state: state)).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            PosixThread.nameCurrentThread(start.name)
            if case .realtime(let priority) = start.scheduling, PosixThread.promoteCurrentThread(priority: priority) {
                start.state.realtime.store(true, ordering: .releasing)
            }
            start.body()
            return nil
        }, start)
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw StartError(code: rc)
        }
        thread = tid
    }

    /// True when the thread obtained a real-time policy (valid once the thread has started).
    package var isRealtime: Bool { state.realtime.load(ordering: .acquiring) }

    /// Whether the calling thread is this thread.
    package var isCurrent: Bool {
        guard let thread else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Waits for the thread to end; on the thread itself, detaches it instead. Idempotent.
    package func join() {
        guard let t = thread else { return }
        thread = nil
        if pthread_equal(t, pthread_self()) != 0 {
            pthread_detach(t)
        } else {
            pthread_join(t, nil)
        }
    }

    /// Lets the thread end by itself (nobody joins it). Idempotent.
    package func detach() {
        guard let t = thread else { return }
        thread = nil
        pthread_detach(t)
    }

    deinit { join() }

    /// Asks for `SCHED_FIFO` (else `SCHED_RR`) at `priority` for the calling thread; returns
    /// whether the system allowed it. Never fails otherwise.
    @discardableResult
    package static func promoteCurrentThread(priority: Int32) -> Bool {
        var param = sched_param()
        param.sched_priority = priority
        let me = pthread_self()
        return pthread_setschedparam(me, SCHED_FIFO, &param) == 0 || pthread_setschedparam(me, SCHED_RR, &param) == 0
    }

    /// Names the calling thread (at most 15 bytes are kept) through `/proc/thread-self/comm`
    /// (`pthread_setname_np` does not import into Swift); best effort.
    package static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
