// The thread that calls a live tap's block: polls the tap's ring, delivers, ends with the tap.
import AudioGraphRealtime

#if canImport(Glibc)
import Glibc
#endif

/// One normal-priority thread per ``LiveTap`` with ``LiveTap/Delivery/thread`` delivery: it
/// looks at the tap's ring every ``LiveTap/pollInterval`` seconds and delivers what is there
/// (``LiveTap/deliverPending()``), until the tap is finished (removed, let go of by the render
/// thread, last partial buffer delivered) or freed.
///
/// Why one thread per tap rather than one shared thread: a slow block (a file write, a UI
/// update, a block that sleeps) then only makes *its own* tap lose buffers; a shared thread would
/// make every tap of the process drop while one block runs. Taps are few (one per bus at most),
/// so the threads are few. Why polling rather than a wake-up: the render thread must not make a
/// system call that can block or be slow, and even a semaphore post is a futex call when the
/// thread sleeps; polling at a quarter of a buffer's duration (1–20 ms) costs the delivery side a
/// few wake-ups per buffer, and the ring holds several buffers, so nothing is lost to the delay.
///
/// Thread safety: ``start(for:)`` runs on the control thread that installs the tap (never the
/// render thread). The thread holds the tap only weakly between polls and is detached: it ends
/// by itself, and nobody joins it.
enum TapDeliveryThread {
    private final class Context: @unchecked Sendable {
        weak var tap: LiveTap?
        init(_ tap: LiveTap) { self.tap = tap }
    }

    /// Starts the delivery thread of `tap` (detached: it ends by itself). Control thread.
    static func start(for tap: LiveTap) throws(AudioGraphError) {
        let context = Context(tap)
        do throws(PosixThread.StartError) {
            try PosixThread(name: "ag-tap-delivery") { TapDeliveryThread.run(context) }.detach()
        } catch {
            throw .invalidState("cannot start the delivery thread of a tap on bus \(tap.bus) (error \(error.code))")
        }
    }

    private static func run(_ context: Context) {
        while true {
            let interval: Double
            do {
                guard let tap = context.tap else { return }
                tap.deliverPending()
                if tap.isFinished { return }
                interval = tap.pollInterval
            }
            var ts = timespec(tv_sec: 0, tv_nsec: Int(interval * 1e9))
            nanosleep(&ts, nil)
        }
    }
}
