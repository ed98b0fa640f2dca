// Frames per channel waiting to be read: the output FIFO of the WSOLA stretcher and of its pitch shifter.
import AudioGraphCore

/// A first-in, first-out queue of frames, one array per channel: blocks are written at its end
/// and frames read from its front; a write that would not fit after the last frame first moves
/// what is waiting back to the start of the storage. Its capacity is fixed when it is made, so
/// the caller sizes it for the most it will hold (the most one read takes plus one block).
///
/// Thread safety: made on a control thread (it allocates); then one thread (the render thread)
/// writes and reads it: real-time safe, no allocation, no lock.
final class PlanarFIFO {
    let channelCount: Int
    /// Frames each channel holds.
    let capacity: Int
    private let storage: ChannelBufferStorage
    /// Frames waiting, and where the first of them is.
    private(set) var level = 0
    private var readIndex = 0

    init(channelCount: Int, capacity: Int) {
        self.channelCount = max(1, channelCount)
        self.capacity = max(1, capacity)
        storage = ChannelBufferStorage(channelCount: self.channelCount, capacity: self.capacity)
    }

    /// Empties it.
    func removeAll() {
        level = 0
        readIndex = 0
    }

    /// The index in every channel (``channel(_:)``) where the next `frameCount` frames go, after
    /// moving the waiting frames back to the start when they would not fit after the last one;
    /// ``didAppend(_:)`` then counts them in.
    /// `level + frameCount` must not exceed ``capacity``.
    @inline(__always)
    func reserve(_ frameCount: Int) -> Int {
        if readIndex + level + frameCount > capacity {
            for c in 0..<channelCount {
                let f = storage.list.channel(c)
                UnsafeMutableRawPointer(f).copyMemory(from: f + readIndex, byteCount: level * MemoryLayout<Float>.stride)
            }
            readIndex = 0
        }
        return readIndex + level
    }

    /// Channel `c`'s storage (frame `i` of the queue is at `readIndex + i`; write at the offset
    /// ``reserve(_:)`` returned).
    @inline(__always)
    func channel(_ c: Int) -> UnsafeMutablePointer<Float> { storage.list.channel(c) }

    /// Counts in `frameCount` frames written after the last one.
    @inline(__always)
    func didAppend(_ frameCount: Int) { level += frameCount }

    /// Moves `frameCount` frames (at most ``level``) to `output`'s channels from frame `offset`
    /// on (channels beyond ``channelCount`` are left alone).
    @inline(__always)
    func read(into output: ChannelBufferList, at offset: Int, frameCount n: Int) {
        for c in 0..<min(channelCount, output.channelCount) {
            (output.channel(c) + offset).update(from: storage.list.channel(c) + readIndex, count: n)
        }
        consume(n)
    }

    /// Moves `frameCount` frames (at most ``level``) to `destination`, interleaved
    /// (``channelCount`` floats per frame).
    @inline(__always)
    func read(interleavedInto destination: UnsafeMutablePointer<Float>, frameCount n: Int) {
        for c in 0..<channelCount {
            let x = storage.list.channel(c) + readIndex
            for i in 0..<n { destination[i &* channelCount &+ c] = x[i] }
        }
        consume(n)
    }

    @inline(__always)
    private func consume(_ n: Int) {
        level -= n
        readIndex = level == 0 ? 0 : readIndex + n
    }
}
