// CoreAudio's AudioBuffer, defined for Linux with the same fields and layout.

/// One buffer of an ``AudioBufferList``: CoreAudio's `AudioBuffer` (same field names, same C
/// layout: two `UInt32` then a pointer, 16 bytes on 64-bit Linux).
///
/// Thread safety: a value type; the memory `mData` points at belongs to whoever made the list.
public struct AudioBuffer: @unchecked Sendable {
    /// Interleaved channels in this buffer (1 for each buffer of a deinterleaved list).
    public var mNumberChannels: UInt32
    /// Bytes of valid data at `mData`.
    public var mDataByteSize: UInt32
    /// The samples.
    public var mData: UnsafeMutableRawPointer?

    /// An empty buffer: no channels, no data.
    public init() {
        mNumberChannels = 0
        mDataByteSize = 0
        mData = nil
    }

    /// A buffer with every field given, as CoreAudio's memberwise initializer.
    public init(mNumberChannels: UInt32, mDataByteSize: UInt32, mData: UnsafeMutableRawPointer?) {
        self.mNumberChannels = mNumberChannels
        self.mDataByteSize = mDataByteSize
        self.mData = mData
    }
}

extension AudioBuffer {
    /// A buffer over `typedBuffer`'s memory holding `numberOfChannels` interleaved channels, as
    /// the Swift overlay of CoreAudio offers.
    public init<Element>(_ typedBuffer: UnsafeMutableBufferPointer<Element>, numberOfChannels: Int) {
        self.init(mNumberChannels: UInt32(numberOfChannels),
                  mDataByteSize: UInt32(typedBuffer.count * MemoryLayout<Element>.stride),
                  mData: UnsafeMutableRawPointer(typedBuffer.baseAddress))
    }
}
