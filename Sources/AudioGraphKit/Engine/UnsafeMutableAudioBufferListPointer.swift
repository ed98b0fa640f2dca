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
    public typealias Index = Int

    /// 0.
    public var startIndex: Int { 0 }

    /// ``count``.
    public var endIndex: Int { count }

    /// Buffer `index` (0 ..< count). Real-time safe.
    public subscript(index: Int) -> AudioBuffer {
        get {
            precondition(index >= 0 && index < count, "UnsafeMutableAudioBufferListPointer: index \(index) out of range 0..<\(count)")
            return buffers[index]
        }
        nonmutating set {
            precondition(index >= 0 && index < count, "UnsafeMutableAudioBufferListPointer: index \(index) out of range 0..<\(count)")
            buffers[index] = newValue
        }
    }
}
