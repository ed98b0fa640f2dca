// CoreAudio's variable-length AudioBufferList, defined for Linux, with the Swift overlay's allocate.
import Foundation

/// CoreAudio's `AudioBufferList`: a count followed by that many ``AudioBuffer``s in one block of
/// memory, of which the struct declares the first (`mBuffers`, as C's `AudioBuffer mBuffers[1]`
/// imports). Reach every buffer through ``UnsafeMutableAudioBufferListPointer``; make a list for
/// more than one buffer with ``allocate(maximumBuffers:)``, which `free()` releases as on Apple's
/// platforms.
///
/// Layout (64-bit Linux, as CoreAudio's): `mNumberBuffers` at offset 0, `mBuffers` at offset 8,
/// each further buffer 16 bytes after the previous one.
///
/// Thread safety: a value type over memory someone owns; whoever owns it says who may write.
public struct AudioBufferList: @unchecked Sendable {
    /// The number of buffers that follow.
    public var mNumberBuffers: UInt32
    /// The first buffer (the others follow it in memory).
    public var mBuffers: (AudioBuffer)

    /// A list of no buffers.
    public init() {
        mNumberBuffers = 0
        mBuffers = AudioBuffer()
    }

    /// A list with its fields given, as CoreAudio's memberwise initializer.
    public init(mNumberBuffers: UInt32, mBuffers: (AudioBuffer)) {
        self.mNumberBuffers = mNumberBuffers
        self.mBuffers = mBuffers
    }

    /// Bytes a list of `maximumBuffers` buffers takes (at least 1): the struct plus one
    /// ``AudioBuffer`` stride per further buffer.
    public static func sizeInBytes(maximumBuffers: Int) -> Int {
        guard maximumBuffers >= 1 else {
            fatalError("AudioBufferList.sizeInBytes: an AudioBufferList holds at least one AudioBuffer")
        }
        return MemoryLayout<AudioBufferList>.size + (maximumBuffers - 1) * MemoryLayout<AudioBuffer>.stride
    }

    /// Allocates zeroed memory for `maximumBuffers` buffers with `calloc` and sets
    /// `mNumberBuffers` to `maximumBuffers`. Release it with `free(list.unsafeMutablePointer)`.
    /// Allocates: not on the render thread.
    public static func allocate(maximumBuffers: Int) -> UnsafeMutableAudioBufferListPointer {
        let size = sizeInBytes(maximumBuffers: maximumBuffers)
        guard let memory = calloc(size, 1) else {
            fatalError("AudioBufferList.allocate: out of memory (\(size) bytes)")
        }
        let list = memory.bindMemory(to: AudioBufferList.self, capacity: 1)
        (memory + bufferOffset).bindMemory(to: AudioBuffer.self, capacity: maximumBuffers)
        let pointer = UnsafeMutableAudioBufferListPointer(list)
        pointer.count = maximumBuffers
        return pointer
    }

    /// Where `mBuffers` starts in the struct (8 on 64-bit Linux).
    static let bufferOffset = MemoryLayout<AudioBufferList>.offset(of: \.mBuffers)!
}
