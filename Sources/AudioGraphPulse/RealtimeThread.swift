// A joinable POSIX thread that asks for real-time scheduling (the dedicated render thread).
import AudioGraphRealtime
import AudioGraphCore
import CPulseShim
import Glibc
import Synchronization

/// A dedicated POSIX thread running one closure, started with `init` and joined with `join()`.
///
/// The thread first tries `SCHED_FIFO` at `priority` (falling back to `SCHED_RR`); when the
/// system does not permit it (no `CAP_SYS_NICE`, RLIMIT_RTPRIO 0) it silently keeps the normal
/// policy. `isRealtime` says which happened once the thread runs.
///
/// Thread safety: `init` and `join()` belong to one control thread; `join()` is idempotent.
/// `isRealtime` may be read from any thread.
final class RealtimeThread: @unchecked Sendable {
    // MARK: Control thread only
    private var thread: pthread_t?

    // MARK: Shared (atomic)
    private let realtime = Atomic<Bool>(false)

    /// Starts a thread named `name` (at most 15 bytes are kept) that runs `body` then ends.
    init(name: String, priority: Int32 = RenderThread.schedulingPriority, body: @escaping @Sendable () -> Void) {
        final class Start {
            let body: @Sendable () -> Void
            let owner: RealtimeThread
            let priority: Int32
            let name: String
            init(body: @escaping @Sendable () -> Void, owner: RealtimeThread, priority: Int32, name: String) {
                self.body = body; self.owner = owner; self.priority = priority; self.name = name
            }
        }
        let start = Unmanaged.passRetained(Start(body: body, owner: self, priority: priority, name: name)).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { arg in
            let start = Unmanaged<Start>.fromOpaque(arg!).takeRetainedValue()
            _ = ag_set_current_thread_name(String(decoding: start.name.utf8.prefix(15), as: UTF8.self))
            if RealtimeThread.promoteCurrentThread(priority: start.priority) {
                start.owner.realtime.store(true, ordering: .releasing)
            }
            start.body()
            return nil
        }, start)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        thread = tid
    }

    /// Asks for `SCHED_FIFO` (else `SCHED_RR`) at `priority` for the calling thread; returns
    /// whether the system allowed it. Never fails otherwise.
    @discardableResult
    static func promoteCurrentThread(priority: Int32) -> Bool {
        var param = sched_param()
        param.sched_priority = priority
        let me = pthread_self()
        return pthread_setschedparam(me, SCHED_FIFO, &param) == 0 || pthread_setschedparam(me, SCHED_RR, &param) == 0
    }

    /// True when the thread obtained a real-time policy (valid once the thread has started).
    var isRealtime: Bool { realtime.load(ordering: .acquiring) }

    /// Waits for the thread to end. Idempotent.
    func join() {
        guard let t = thread else { return }
        thread = nil
        pthread_join(t, nil)
    }

    deinit {
        join()
    }
}
