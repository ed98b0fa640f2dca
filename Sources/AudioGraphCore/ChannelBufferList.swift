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

    /// Zeroed memory for `channelCount` channels of `capacity` frames.
    ///
    /// - Parameter faultsInPages: write the zeros (the default), so that every page is in memory
    ///   before a render thread writes it: a first write to a page the kernel has not given yet is
    ///   a page fault, which a render thread must not take. False: the pages come zeroed from
    ///   `calloc` and are faulted in only when used, for a buffer most of which may never be
    ///   touched (the offline renderer's 64-channel silence: 1 MiB, 256 page faults of a short
    ///   render's start-up).
    public convenience init(channelCount: Int, capacity: Int) {
        self.init(channelCount: channelCount, capacity: capacity, faultsInPages: true)
    }

    /// Zeroed memory as ``init(channelCount:capacity:)``, its pages faulted in now or on first use.
    public init(channelCount: Int, capacity: Int, faultsInPages: Bool) {
        precondition(channelCount >= 0 && capacity >= 0)
        let count = Swift.max(1, channelCount * capacity)
        let base: UnsafeMutablePointer<Float>
        if faultsInPages {
            base = UnsafeMutablePointer<Float>.allocate(capacity: count)
            base.initialize(repeating: 0, count: count)
        } else {
            guard let raw = calloc(count, MemoryLayout<Float>.stride) else { fatalError("out of memory: \(count) samples") }
            base = raw.bindMemory(to: Float.self, capacity: count)
        }
        isCalloced = !faultsInPages
        list = ChannelBufferList(channelCount: channelCount, capacity: capacity, base: base)
    }

    private let isCalloced: Bool

    deinit {
        if isCalloced { free(list.base) } else { list.base.deallocate() }
    }
}
