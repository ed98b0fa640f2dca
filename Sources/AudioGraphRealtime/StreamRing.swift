// A lock-free single-producer/single-consumer ring of non-interleaved audio frames (disk thread → render thread).

import Synchronization

/// A fixed ring of `capacity` frames (a power of two) per channel, written by one producer
/// thread and read by one consumer thread, lock-free (cf. the acquire/release ring
/// ``RingBuffer``, here non-interleaved and indexed by ever-growing frame counts).
///
/// Indices count frames since the ring was made and never wrap back (an `Int` lasts millions of
/// years of audio); the slot of index `i` is `i & (capacity - 1)`. The producer publishes
/// ``writtenIndex`` with release ordering after writing the samples; the consumer publishes the
/// index it no longer needs with ``releaseFrames(upTo:)``, with release ordering after reading them.
/// The consumer may skip forward (to any index up to ``writtenIndex``) to discard frames.
///
/// Thread safety: `write…` and ``freeFrames`` from the producer thread only; ``writtenIndex``,
/// ``sample(channel:at:)``, ``copy(channel:from:count:into:gains:gain:)`` and
/// ``releaseFrames(upTo:)`` from the consumer thread only. All of them
/// are real-time safe (no allocation, no lock, no wait). Storage is allocated in `init` and freed
/// in `deinit` (off the render thread).
package final class StreamRing: @unchecked Sendable {
    /// Channels per frame.
    package let channelCount: Int
    /// Frames the ring holds (a power of two).
    package let capacity: Int
    private let mask: Int
    /// Channel `c`, slot `s` is at `storage[c * capacity + s]`.
    private let storage: UnsafeMutablePointer<Float>

    // MARK: Shared (atomic)
    /// One past the last frame written (stored by the producer, releasing).
    private let written = Atomic<Int>(0)
    /// The first frame the consumer still needs (stored by the consumer, releasing).
    private let consumed = Atomic<Int>(0)

    // MARK: Producer thread only
    private var producerIndex = 0

    /// A ring of at least `minimumCapacity` frames (rounded up to a power of two).
    package init(channelCount: Int, minimumCapacity: Int) {
        self.channelCount = max(1, channelCount)
        var c = 1
        while c < max(2, minimumCapacity) { c <<= 1 }
        capacity = c
        mask = c - 1
        storage = .allocate(capacity: self.channelCount * c)
        storage.initialize(repeating: 0, count: self.channelCount * c)
    }

    deinit { storage.deallocate() }

    // MARK: Producer

    /// The producer's next index (what it will publish after its next write).
    package var producerWriteIndex: Int { producerIndex }

    /// Frames the producer may write now without overwriting frames the consumer still needs.
    package var freeFrames: Int { capacity - (producerIndex - consumed.load(ordering: .acquiring)) }

    /// Appends `frameCount` interleaved frames of `channelCount` channels (at most ``freeFrames``)
    /// and publishes them.
    package func write(interleaved source: UnsafePointer<Float>, frameCount: Int) {
        assert(frameCount <= freeFrames, "ring overrun")
        let ch = channelCount
        // Two contiguous runs (before and after the wrap), each a plain strided copy.
        let slot = producerIndex & mask
        let first = min(frameCount, capacity - slot)
        // Wrapping index arithmetic (`&*`): no overflow traps in the loops, so they vectorise
        // (the indices are bounded by the ring's and the source's sizes).
        for c in 0..<ch {
            let channel = storage + c * capacity
            let run = channel + slot
            let src = source + c
            if ch == 1 {
                run.update(from: src, count: first)
                channel.update(from: src + first, count: frameCount - first)
            } else {
                for i in 0..<first { run[i] = src[i &* ch] }
                let rest = src + first * ch
                for i in 0..<(frameCount - first) { channel[i] = rest[i &* ch] }
            }
        }
        producerIndex += frameCount
        written.store(producerIndex, ordering: .releasing)
    }

    /// A mono ring only: lets `fill` write the next `frameCount` frames (at most ``freeFrames``)
    /// straight into the ring's storage — at most two contiguous runs, before and after the
    /// wrap: `fill(run, frames, offset)` writes `frames` samples at `run` for the frames
    /// `offset..<offset + frames` of the request and returns how many it wrote (fewer, or -1:
    /// the rest of the request is zeroed and `fill` is not called again). Publishes the frames
    /// and returns the frames `fill` wrote. Saves the copy of ``write(interleaved:frameCount:)``
    /// when the source can write where it is told (a file read).
    package func writeMono(frameCount: Int, fill: (_ run: UnsafeMutablePointer<Float>, _ frames: Int, _ offset: Int) -> Int) -> Int {
        assert(channelCount == 1 && frameCount <= freeFrames, "mono ring only; ring overrun")
        let slot = producerIndex & mask
        let first = min(frameCount, capacity - slot)
        var filled = 0
        // The run before the wrap, then the one after it (no array: nothing is allocated).
        for part in 0..<2 {
            let run = part == 0 ? storage + slot : storage
            let frames = part == 0 ? first : frameCount - first
            let offset = part == 0 ? 0 : first
            guard frames > 0 else { continue }
            let got = filled == offset ? max(0, min(frames, fill(run, frames, offset))) : 0
            filled += got
            if got < frames { (run + got).update(repeating: 0, count: frames - got) }
        }
        producerIndex += frameCount
        written.store(producerIndex, ordering: .releasing)
        return filled
    }

    // MARK: Consumer

    /// One past the last frame the producer has published (acquiring: its samples are visible).
    package var writtenIndex: Int { written.load(ordering: .acquiring) }

    /// The sample of channel `channel` at frame index `index` (which must lie between the
    /// consumer's released index and ``writtenIndex``).
    @inline(__always)
    package func sample(channel: Int, at index: Int) -> Float {
        storage[channel * capacity + (index & mask)]
    }

    /// Copies `count` samples of channel `channel` from frame index `index` on (all between the
    /// consumer's released index and ``writtenIndex``) into `destination`, each multiplied by
    /// `gains[i]`, or by `gain` when `gains` is nil. Two contiguous runs, no per-sample index
    /// arithmetic beyond the wrap.
    @inline(__always)
    package func copy(channel: Int, from index: Int, count: Int, into destination: UnsafeMutablePointer<Float>,
              gains: UnsafePointer<Float>?, gain: Float) {
        let source = storage + channel * capacity
        let slot = index & mask
        let first = min(count, capacity - slot)
        // Offset pointers instead of index arithmetic in the loops (no overflow traps: they vectorise).
        let run = source + slot
        let rest = destination + first
        if let gains {
            let restGains = gains + first
            for i in 0..<first { destination[i] = run[i] * gains[i] }
            for i in 0..<(count - first) { rest[i] = source[i] * restGains[i] }
        } else {
            for i in 0..<first { destination[i] = run[i] * gain }
            for i in 0..<(count - first) { rest[i] = source[i] * gain }
        }
    }

    /// Gives the frames before `index` back to the producer.
    @inline(__always)
    package func releaseFrames(upTo index: Int) {
        consumed.store(index, ordering: .releasing)
    }
}
