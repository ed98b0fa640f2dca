// A lock-free single-producer/single-consumer ring of fixed-size schedule records (commands in, completion events out).
import AudioGraphRealtime
import Synchronization

/// One fixed-size record of a ``ScheduledSoundPlayerNode``'s two rings.
///
/// Commands (control → render): `kind` is a ``Kind`` command, `region` a retained
/// ``ScheduledRegion`` for `.schedule`, `time` the node time of `.play` (`Int64.min`: now).
/// Events (render → notifier): `kind` is `.finished`, `region` the retained region the render
/// thread gives back, `time` the node time just after its last frame, `hostTime` the
/// CLOCK_MONOTONIC nanoseconds at which that frame is heard.
struct ScheduleRecord: Sendable {
    enum Kind: UInt8, Sendable {
        case schedule, play, pause, stop, finished
    }
    var kind: Kind
    /// An `Unmanaged<ScheduledRegion>` holding one retain (nil for play, pause, stop).
    nonisolated(unsafe) var region: UnsafeMutableRawPointer?
    var time: Int64
    var hostTime: UInt64

    init(kind: Kind, region: UnsafeMutableRawPointer? = nil, time: Int64 = 0, hostTime: UInt64 = 0) {
        self.kind = kind
        self.region = region
        self.time = time
        self.hostTime = hostTime
    }
}

/// A fixed ring of ``ScheduleRecord``s written by one producer and read by one consumer,
/// lock-free (cf. ``StreamRing``: ever-growing indices, the producer publishes the tail with
/// release ordering after writing the record, the consumer the head after reading it).
///
/// Thread safety: ``push(_:)`` from one producer thread at a time (the control side serialises
/// its producers with a `ControlLock` the render thread never takes), ``pop()`` from one consumer
/// thread at a time. Both are real-time safe: no allocation, no lock, no wait. Storage is
/// allocated in `init` and freed in `deinit` (off the render thread).
final class ScheduleRecordRing: @unchecked Sendable {
    /// Records the ring holds (a power of two).
    let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<ScheduleRecord>

    // MARK: Shared (atomic)
    /// One past the last record published (stored by the producer, releasing).
    private let tail = Atomic<Int>(0)
    /// The next record to read (stored by the consumer, releasing).
    private let head = Atomic<Int>(0)

    /// A ring of at least `minimumCapacity` records (rounded up to a power of two).
    init(minimumCapacity: Int) {
        var c = 2
        while c < minimumCapacity { c <<= 1 }
        capacity = c
        mask = c - 1
        storage = .allocate(capacity: c)
        storage.initialize(repeating: ScheduleRecord(kind: .stop), count: c)
    }

    deinit {
        storage.deinitialize(count: capacity)
        storage.deallocate()
    }

    /// Appends a record; false when the ring is full (nothing written). Producer only.
    @inline(__always)
    func push(_ record: ScheduleRecord) -> Bool {
        let t = tail.load(ordering: .relaxed)
        if t - head.load(ordering: .acquiring) >= capacity { return false }
        storage[t & mask] = record
        tail.store(t + 1, ordering: .releasing)
        return true
    }

    /// Takes the oldest record, or nil when the ring is empty. Consumer only.
    @inline(__always)
    func pop() -> ScheduleRecord? {
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return nil }
        let record = storage[h & mask]
        head.store(h + 1, ordering: .releasing)
        return record
    }

    /// Records published and not yet taken (a snapshot; any thread).
    var count: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }
}
