// Canonical non-interleaved float buffers: a non-owning view and the storage that owns it.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// A view of non-interleaved `Float` audio: `channelCount` channels of `capacity` frames each.
///
/// The view does not own its memory (it is a pair of pointers and sizes, free to copy on the
/// render thread); an ``ChannelBufferStorage`` owns it.
///
/// Thread safety: the view itself is a value; whoever owns the storage decides which thread may
/// write the samples (a node's output buffers are written by the render thread only).
public struct ChannelBufferList: @unchecked Sendable {
    /// Channel count.
    public let channelCount: Int
    /// Frames per channel the memory holds (the graph's `maximumFramesPerSlice` for buses).
    public let capacity: Int
    /// Channel `c` starts at `base + c * capacity`.
    public let base: UnsafeMutablePointer<Float>

    public init(channelCount: Int, capacity: Int, base: UnsafeMutablePointer<Float>) {
        self.channelCount = channelCount
        self.capacity = capacity
        self.base = base
    }

    /// The samples of channel `index`. Real-time safe.
    @inline(__always)
    public func channel(_ index: Int) -> UnsafeMutablePointer<Float> {
        assert(index >= 0 && index < channelCount, "channel index out of range")
        return base + index * capacity
    }

    /// Sets the first `frameCount` frames of every channel to zero. Real-time safe.
    @inline(__always)
    public func clear(frameCount: Int) {
        assert(frameCount <= capacity)
        for c in 0..<channelCount { channel(c).update(repeating: 0, count: frameCount) }
    }

    /// Copies `frameCount` frames of every channel common to both lists. Real-time safe.
    @inline(__always)
    public func copy(from source: ChannelBufferList, frameCount: Int) {
        let n = Swift.min(channelCount, source.channelCount)
        for c in 0..<n { channel(c).update(from: source.channel(c), count: frameCount) }
    }
}

/// Owns the memory of an ``ChannelBufferList``, zeroed at allocation and freed in `deinit`.
///
/// Allocate on a control thread (at initialize); the render thread only uses ``list``.
/// Thread safety: immutable after init; `deinit` must not run on the render thread, which the
/// render-plan hand-off guarantees (retired plans are released by the control thread).
public final class ChannelBufferStorage: @unchecked Sendable {
    public let list: ChannelBufferList

    public init(channelCount: Int, capacity: Int) {
        precondition(channelCount >= 0 && capacity >= 0)
        let count = Swift.max(1, channelCount * capacity)
        // calloc, not allocate + initialize: a large buffer comes zeroed from the kernel, and pages
        // never written (most of a short render's, or of the 64-channel silence an offline render
        // keeps) are never faulted in.
        guard let raw = calloc(count, MemoryLayout<Float>.stride) else { fatalError("out of memory: \(count) samples") }
        let base = raw.bindMemory(to: Float.self, capacity: count)
        list = ChannelBufferList(channelCount: channelCount, capacity: capacity, base: base)
    }

    deinit { free(list.base) }
}
