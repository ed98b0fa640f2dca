// A lock-free single-producer single-consumer ring of interleaved Float32 samples.
import Synchronization

/// A fixed-capacity, lock-free, wait-free single-producer / single-consumer FIFO of `Float`
/// samples (interleaved frames) between two threads, e.g. our render thread and the PulseAudio
/// mainloop thread.
///
/// The storage is allocated once in `init` and freed in `deinit`; `write` and `read` never
/// allocate, lock, block or fail: they move as many samples as fit / are available and return
/// that count.
///
/// The indices are monotonically increasing sample counters (`Int`, 64 bits, never wrapping in
/// practice); the position in storage is `index % capacity`. The producer publishes what it
/// wrote with a *releasing* store of `writeIndex`, the consumer reads it with an *acquiring*
/// load (so the samples are visible before the index); symmetrically for `readIndex`, which
/// tells the producer that space is free again.
///
/// Thread safety: exactly one thread may call the producer side (`write`, `writableCount`) and
/// exactly one thread may call the consumer side (`read`, `readableCount`, `discard`) at a time;
/// the two sides may run concurrently. `reset()` requires both sides to be idle.
/// All of `write`, `read`, `readableCount`, `writableCount`, `discard` are real-time safe.
package final class RingBuffer: @unchecked Sendable {
    /// Capacity in samples.
    package let capacity: Int

    // MARK: Shared (atomic)
    /// Total samples ever written; stored by the producer (releasing), loaded by the consumer (acquiring).
    private let writeIndex = Atomic<Int>(0)
    /// Total samples ever read; stored by the consumer (releasing), loaded by the producer (acquiring).
    private let readIndex = Atomic<Int>(0)

    // MARK: Storage (written by the producer before publishing, read by the consumer after acquiring)
    private let storage: UnsafeMutablePointer<Float>

    /// Creates a ring holding at most `capacity` samples (at least 1).
    package init(capacity: Int) {
        precondition(capacity > 0, "RingBuffer capacity must be positive")
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: 0, count: capacity)
    }

    deinit {
        storage.deallocate()
    }

    /// Samples the consumer can read now. Consumer side (also a fair estimate from elsewhere).
    @inline(__always)
    package var readableCount: Int {
        let w = writeIndex.load(ordering: .acquiring)
        let r = readIndex.load(ordering: .relaxed)
        return w - r
    }

    /// Samples the producer can write now. Producer side (also a fair estimate from elsewhere).
    @inline(__always)
    package var writableCount: Int {
        let r = readIndex.load(ordering: .acquiring)
        let w = writeIndex.load(ordering: .relaxed)
        return capacity - (w - r)
    }

    /// Copies up to `count` samples from `source`; returns how many were written. Producer side,
    /// real-time safe.
    @discardableResult
    package func write(_ source: UnsafePointer<Float>, count: Int) -> Int {
        produce(count) { region, offset, n in region.update(from: source + offset, count: n) }
    }

    /// Writes `count` zero samples (or fewer if full); returns how many. Producer side, real-time safe.
    @discardableResult
    package func writeSilence(count: Int) -> Int {
        produce(count) { region, _, n in region.update(repeating: 0, count: n) }
    }

    /// Fills up to `count` free samples through `fill(region, sourceOffset, n)`, in at most two
    /// contiguous regions (the wrap), then publishes them. Producer side, real-time safe (the
    /// closure is not escaping: no allocation).
    @inline(__always)
    private func produce(_ count: Int, _ fill: (UnsafeMutablePointer<Float>, Int, Int) -> Void) -> Int {
        let w = writeIndex.load(ordering: .relaxed)
        let r = readIndex.load(ordering: .acquiring)
        let n = min(count, capacity - (w - r))
        guard n > 0 else { return 0 }
        let start = w % capacity
        let first = min(n, capacity - start)
        fill(storage + start, 0, first)
        if n > first { fill(storage, first, n - first) }
        writeIndex.store(w + n, ordering: .releasing)
        return n
    }

    /// Copies up to `count` samples into `destination`; returns how many were read. Consumer
    /// side, real-time safe.
    @discardableResult
    package func read(into destination: UnsafeMutablePointer<Float>, count: Int) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let w = writeIndex.load(ordering: .acquiring)
        let n = min(count, w - r)
        guard n > 0 else { return 0 }
        let start = r % capacity
        let first = min(n, capacity - start)
        destination.update(from: storage + start, count: first)
        if n > first { (destination + first).update(from: storage, count: n - first) }
        readIndex.store(r + n, ordering: .releasing)
        return n
    }

    /// Drops up to `count` readable samples; returns how many. Consumer side, real-time safe.
    @discardableResult
    package func discard(count: Int) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let w = writeIndex.load(ordering: .acquiring)
        let n = min(count, w - r)
        guard n > 0 else { return 0 }
        readIndex.store(r + n, ordering: .releasing)
        return n
    }

    /// Empties the ring. Only while neither side is running.
    package func reset() {
        let w = writeIndex.load(ordering: .acquiring)
        readIndex.store(w, ordering: .releasing)
    }
}
