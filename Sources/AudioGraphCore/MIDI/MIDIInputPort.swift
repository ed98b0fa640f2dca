// The lock-free queue of MIDI events from control threads to an instrument's kernel.
import Synchronization

/// The queue of MIDI events an instrument node receives from control threads (the engine API's
/// `startNote`…, graph-file events), drained by its kernel at the start of every slice
/// (``MIDIEventCollector``). A fixed ring of ``capacity`` timed events allocated at creation:
/// producers take a lock among themselves (control threads only), the one consumer — the render
/// thread — never locks, allocates or waits.
///
/// Thread safety: ``send(_:at:)`` from any thread except the render thread; the consumer side
/// (``drain(_:)``) from the render thread of the kernel that owns the port's collector.
public final class MIDIInputPort: @unchecked Sendable {
    /// The sample time that means "at the start of the next slice".
    public static let nextSlice = Int64.min
    /// How many events may wait in the queue.
    public let capacity: Int

    // MARK: Shared (atomic)
    /// Events ever written (stored by the producer, releasing; loaded by the consumer, acquiring).
    private let writeIndex = Atomic<Int>(0)
    /// Events ever read (stored by the consumer, releasing; loaded by producers, acquiring).
    private let readIndex = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    // MARK: Producers (serialised by `producers`)
    private let producers = Mutex<Void>(())
    // MARK: Storage (written by a producer before publishing, read by the consumer after acquiring)
    private let slots: UnsafeMutablePointer<TimedMIDIEvent>

    /// A port holding up to `capacity` waiting events.
    public init(capacity: Int = 4096) {
        precondition(capacity > 0, "MIDIInputPort capacity must be positive")
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: TimedMIDIEvent(event: MIDIEvent(status: 0xFE), sampleTime: 0), count: capacity)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Queues `event` at graph frame `sampleTime` (nil: the next slice). False when the queue
    /// is full (dropped, counted in ``droppedEventCount``). Not on the render thread.
    @discardableResult
    public func send(_ event: MIDIEvent, at sampleTime: Int64? = nil) -> Bool {
        producers.withLock { _ in
            let w = writeIndex.load(ordering: .relaxed)
            let r = readIndex.load(ordering: .acquiring)
            guard w - r < capacity else {
                dropped.add(1, ordering: .relaxed)
                return false
            }
            slots[w % capacity] = TimedMIDIEvent(event: event, sampleTime: sampleTime ?? Self.nextSlice)
            writeIndex.store(w + 1, ordering: .releasing)
            return true
        }
    }

    /// Events dropped because the queue was full (or, counted by the collector, because its
    /// pending list or a slice's event list was full). Any thread.
    public var droppedEventCount: Int { dropped.load(ordering: .relaxed) }

    /// Counts `n` events dropped on the consumer side (a full slice or plugin buffer). Real-time safe.
    @inline(__always)
    public func countDropped(_ n: Int) { dropped.add(n, ordering: .relaxed) }

    /// Hands every waiting event to `body`, oldest first. Consumer side (render thread);
    /// real-time safe.
    @inline(__always)
    public func drain(_ body: (TimedMIDIEvent) -> Void) {
        let w = writeIndex.load(ordering: .acquiring)
        var r = readIndex.load(ordering: .relaxed)
        while r < w {
            body(slots[r % capacity])
            r += 1
        }
        readIndex.store(r, ordering: .releasing)
    }
}
