// The Swift overlay's collection view of a variable-length AudioBufferList, defined for Linux.

/// A collection of the ``AudioBuffer``s of an ``AudioBufferList`` in memory (all
/// `mNumberBuffers` of them, not just the declared first one), as CoreAudio's Swift overlay
/// defines it: read and write buffers by index, set ``count`` to change `mNumberBuffers`.
///
/// Thread safety: a pointer; it neither owns nor synchronizes the memory. Reading and writing
/// buffers allocates nothing (real-time safe).
public struct UnsafeMutableAudioBufferListPointer: @unchecked Sendable {
    /// The list.
    public var unsafeMutablePointer: UnsafeMutablePointer<AudioBufferList>

    /// A view of the list at `p`.
    public init(_ p: UnsafeMutablePointer<AudioBufferList>) {
        unsafeMutablePointer = p
    }

    /// A view of the list at `p`; nil when `p` is nil.
    public init?(_ p: UnsafeMutablePointer<AudioBufferList>?) {
        guard let p else { return nil }
        unsafeMutablePointer = p
    }

    /// The list, read-only.
    public var unsafePointer: UnsafePointer<AudioBufferList> { UnsafePointer(unsafeMutablePointer) }

    /// `mNumberBuffers`: the buffers in the list.
    public var count: Int {
        get { Int(unsafeMutablePointer.pointee.mNumberBuffers) }
        nonmutating set { unsafeMutablePointer.pointee.mNumberBuffers = UInt32(newValue) }
    }

    /// The first buffer in memory.
    @inline(__always)
    var buffers: UnsafeMutablePointer<AudioBuffer> {
        (UnsafeMutableRawPointer(unsafeMutablePointer) + AudioBufferList.bufferOffset)
            .assumingMemoryBound(to: AudioBuffer.self)
    }
}

extension UnsafeMutableAudioBufferListPointer: MutableCollection, RandomAccessCollection {
    /// Buffers are indexed 0 ..< count.
    public typealias Index = Int

    /// 0.
    public var startIndex: Int { 0 }

    /// ``count``.
    public var endIndex: Int { count }

    /// Walks the buffers by pointer. (The default `IndexingIterator` reads through the
    /// subscript's `read` coroutine, whose frame a debug build allocates on the heap: not
    /// real-time safe.)
    public struct Iterator: IteratorProtocol {
        private let buffers: UnsafeMutablePointer<AudioBuffer>
        private let count: Int
        private var index = 0

        init(_ list: UnsafeMutableAudioBufferListPointer) {
            buffers = list.buffers
            count = list.count
        }

        /// The next buffer, or nil after the last. Real-time safe.
        public mutating func next() -> AudioBuffer? {
            guard index < count else { return nil }
            defer { index += 1 }
            return buffers[index]
        }
    }

    /// An iterator over the buffers. Real-time safe.
    public func makeIterator() -> Iterator { Iterator(self) }

    /// Buffer `index` (0 ..< count). Real-time safe.
    public subscript(index: Int) -> AudioBuffer {
        get {
            guard index >= 0 && index < count else {
                fatalError("UnsafeMutableAudioBufferListPointer: index \(index) out of range 0..<\(count)")
            }
            return buffers[index]
        }
        nonmutating set {
            guard index >= 0 && index < count else {
                fatalError("UnsafeMutableAudioBufferListPointer: index \(index) out of range 0..<\(count)")
            }
            buffers[index] = newValue
        }
    }
}
