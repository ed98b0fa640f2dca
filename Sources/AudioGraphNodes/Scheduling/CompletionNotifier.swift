// The thread that runs a ScheduledSoundPlayerNode's completion handlers (never the render thread).
import AudioGraphRealtime
import Glibc
import Synchronization

/// Runs the completion handlers of a ``ScheduledSoundPlayerNode`` on a normal-priority thread of
/// its own (which also keeps the node's output latency current from its provider, every 10 ms):
/// it takes finished regions from the event ring the render thread fills, runs
/// `.dataConsumed` and `.dataRendered` handlers at once and `.dataPlayedBack` handlers when the
/// host time in the event (the frame's render time plus the output latency) has come, then
/// releases the regions — so a region, its buffer and its disk streamer are freed here, never on
/// the render thread.
///
/// Thread safety: created and stopped (joined) on a control thread — lazily by the first
/// schedule call, and stopped when the node goes away. Handlers run on the notifier thread
/// (they may schedule again or stop the player).
final class CompletionNotifier: @unchecked Sendable {
    /// How long the notifier sleeps between looks at the event ring (the render thread makes no
    /// system call, so it does not wake the notifier): handlers run at most this late.
    static let idlePollSeconds = 0.002

    private let shared: ScheduledPlayerShared
    private let stopRequested = Atomic<Bool>(false)
    /// The notifier thread's `pthread_self()` (0 until it runs).
    let threadID = Atomic<UInt>(0)

    // MARK: Control thread only
    private var thread: PosixThread?

    /// Starts the notifier thread.
    init(shared: ScheduledPlayerShared) throws(ScheduledSoundPlayerError) {
        self.shared = shared
        do throws(PosixThread.StartError) {
            thread = try PosixThread(name: "ag-completions") { [self] in run() }
        } catch {
            throw .file(.ioFailed(path: "(player)", reason: "cannot start the completion thread (error \(error.code))"))
        }
    }

    /// Stops the thread after it ran every handler already due (and, early, the ones still
    /// waiting for their playback time), and joins it (detaches it when called on the notifier
    /// thread itself, from a handler: the thread ends after that handler returns). Any
    /// non-real-time thread; idempotent.
    func stop() {
        guard let t = thread else { return }
        thread = nil
        stopRequested.store(true, ordering: .releasing)
        shared.notifierWake.post()
        t.join()
    }

    /// How often the notifier refreshes the output latency from the node's provider.
    static let latencyRefreshNanoseconds: UInt64 = 10_000_000

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        var waiting: [(due: UInt64, region: ScheduledRegion)] = []
        var latencyRefreshed: UInt64 = 0
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            let clock = ScheduledPlayerShared.hostTimeNow()
            if clock &- latencyRefreshed >= Self.latencyRefreshNanoseconds {
                latencyRefreshed = clock
                if let provider = shared.latencyProvider.withLock({ $0 }), let latency = provider(), latency.isFinite {
                    shared.latencyBits.store(max(0, latency).bitPattern, ordering: .relaxed)
                }
            }
            while let event = shared.events.pop() {
                guard let raw = event.region else { continue }
                let region = shared.takeBack(raw)
                if region.callbackType == .dataPlayedBack && event.hostTime > ScheduledPlayerShared.hostTimeNow() {
                    waiting.append((event.hostTime, region))
                } else {
                    shared.complete(region)
                }
            }
            if stopping {
                for w in waiting.sorted(by: { $0.due < $1.due }) { shared.complete(w.region) }
                return
            }
            var next = UInt64.max
            if !waiting.isEmpty {
                let now = ScheduledPlayerShared.hostTimeNow()
                waiting.sort { $0.due < $1.due }
                while let first = waiting.first, first.due <= now {
                    waiting.removeFirst()
                    shared.complete(first.region)
                }
                if let first = waiting.first { next = first.due - now }
            }
            let timeout = min(Self.idlePollSeconds, Double(next) / 1e9)
            if timeout > 0 { shared.notifierWake.wait(timeout: timeout) }
        }
    }
}
