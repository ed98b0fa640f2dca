// What a ScheduledSoundPlayerNode's control side, render side and notifier thread share: the two rings and the published atomics.
import AudioGraphRealtime
import Glibc
import Synchronization

/// The state a ``ScheduledSoundPlayerNode`` shares with its kernel and its notifier thread (so
/// that a kernel never refers back to its node): the command ring (control → render), the event
/// ring (render → notifier), the regions not yet completed, and what the render thread publishes.
///
/// Thread safety: ``commands`` has one producer at a time (the node's control lock) and the
/// kernel as consumer; ``events`` has the kernel as producer and the notifier as consumer.
/// ``pending`` is locked by control threads and the notifier, never by the render thread. The
/// atomics may be read anywhere; each has one writer, named below.
final class ScheduledPlayerShared: @unchecked Sendable {
    /// Control → render: schedule, play, pause, stop.
    let commands: ScheduleRecordRing
    /// Render → notifier: finished regions.
    let events: ScheduleRecordRing
    /// Wakes the notifier early (posted by `stop()` of the notifier, never by the render thread,
    /// which makes no system call: the notifier polls the event ring).
    let notifierWake = WakeSemaphore()
    /// The most regions scheduled and not yet given back by the render thread.
    let maximumRegions: Int
    /// Regions whose completion has not run, by identity (control threads and the notifier).
    let pending = ControlLock<[ObjectIdentifier: ScheduledRegion]>([:])
    /// Disk-streaming counters of the node's file segments (starved frames, failed reads).
    let streamCounters = FileStreamer.Counters()
    /// Where the notifier refreshes ``latencyBits`` from (nil: only set by hand). It returns
    /// nil when it cannot tell now without waiting.
    let latencyProvider = ControlLock<(@Sendable () -> Double?)?>(nil)

    // MARK: Shared (atomic)
    /// Regions handed to the render thread and not yet given back (control adds, notifier subtracts).
    let liveRegions = Atomic<Int>(0)
    /// `outputPresentationLatency` in seconds, as bits (any thread writes, the render thread reads).
    let latencyBits = Atomic<UInt64>(0)
    /// Commands the render thread (or, with no kernel, the control side) has taken, published
    /// with release ordering after ``publishedAnchor``.
    let appliedCommands = Atomic<Int64>(0)
    /// While playing: node time minus player time (written by the render thread).
    let publishedAnchor = Atomic<Int64>(0)
    /// The end of the last slice the kernel rendered, on its own timeline (-1 before the first):
    /// behind a rate-changing node it runs faster or slower than the graph's (written by the
    /// render thread, relaxed; a reading may be one slice old).
    let renderedEnd = Atomic<Int64>(-1)

    init(maximumRegions: Int) {
        self.maximumRegions = maximumRegions
        commands = ScheduleRecordRing(minimumCapacity: 4 * maximumRegions)
        // Every region yields exactly one event and at most `maximumRegions` are live.
        events = ScheduleRecordRing(minimumCapacity: maximumRegions)
    }

    deinit {
        // Whatever is still in the rings (no kernel and no notifier is left): complete and release.
        for ring in [commands, events] {
            while let r = ring.pop() {
                if let raw = r.region { complete(takeBack(raw)) }
            }
        }
    }

    /// Takes back the retain a ring record holds on a region. Never on the render thread.
    func takeBack(_ raw: UnsafeMutableRawPointer) -> ScheduledRegion {
        liveRegions.subtract(1, ordering: .relaxed)
        return Unmanaged<ScheduledRegion>.fromOpaque(raw).takeRetainedValue()
    }

    /// Forgets a region and runs its completion (unless it ran). Never on the render thread.
    func complete(_ region: ScheduledRegion) {
        _ = pending.withLock { $0.removeValue(forKey: ObjectIdentifier(region)) }
        region.runCompletion()
    }

    /// CLOCK_MONOTONIC in nanoseconds (vDSO: real-time safe).
    @inline(__always)
    static func hostTimeNow() -> UInt64 { UInt64(MonotonicClock.nanoseconds()) }
}
