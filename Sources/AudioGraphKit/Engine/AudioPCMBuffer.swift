// AVAudioPCMBuffer without the prefix: PCM samples in memory the buffer owns, with CoreAudio's views.
import Foundation

/// A buffer of linear PCM audio in one of the common formats, as `AVAudioPCMBuffer`: room for
/// ``frameCapacity`` frames, of which the first ``frameLength`` are valid.
///
/// The memory is allocated once, zeroed, in the initializer and freed in `deinit`. A
/// deinterleaved format has one buffer per channel and a ``stride`` of 1; an interleaved format
/// has one buffer holding every channel and a stride of the channel count. The same memory is
/// reachable as channel pointers (``floatChannelData``, ``int16ChannelData``,
/// ``int32ChannelData``, non-nil only for their own sample type, as in AVFAudio) and as a
/// CoreAudio ``AudioBufferList`` whose `mDataByteSize` fields follow ``frameLength``.
///
/// Thread safety: not synchronized (`@unchecked Sendable` so that it can be handed from one
/// thread to another, as AVAudioPCMBuffer is): one thread at a time. Reading and writing samples
/// and ``frameLength`` allocate nothing and take no lock (real-time safe); the initializer and
/// `deinit` allocate and free (control threads).
public final class AudioPCMBuffer: @unchecked Sendable {
    // MARK: Immutable after init
    /// The buffer's format.
    public let format: AudioFormat
    /// The frames the buffer can hold.
    public let frameCapacity: AudioFrameCount
    /// Samples of one channel's buffer to the next frame: the channel count when interleaved, 1
    /// otherwise.
    public let stride: Int
    /// The samples, `frameCapacity × channelCount` of them (nil for a buffer over memory the
    /// caller owns: ``init(pcmFormat:bufferListNoCopy:deallocator:)``).
    private let data: UnsafeMutableRawPointer?
    /// The caller's deallocator of a no-copy buffer, called with the caller's list in `deinit`.
    private let deallocator: ((UnsafePointer<AudioBufferList>) -> Void)?
    /// The caller's list of a no-copy buffer (what its deallocator is given).
    private let callerList: UnsafePointer<AudioBufferList>?
    /// One pointer per buffer (one per channel, or one for interleaved data), bound to the
    /// sample type's pointer type.
    private let channelTable: UnsafeMutableRawPointer
    /// The CoreAudio view of the same memory (`calloc`ed by ``AudioBufferList/allocate(maximumBuffers:)``).
    private let bufferList: UnsafeMutableAudioBufferListPointer

    // MARK: Owner thread
    private var validFrames: AudioFrameCount = 0

    /// A buffer for `frameCapacity` frames of `format`, with ``frameLength`` 0; nil when the
    /// format is not one of the PCM common formats (`.otherFormat`).
    public init?(pcmFormat format: AudioFormat, frameCapacity: AudioFrameCount) {
        guard format.commonFormat != .otherFormat else { return nil }
        self.format = format
        self.frameCapacity = frameCapacity
        let channels = Int(format.channelCount)
        let bufferCount = format.isInterleaved ? 1 : channels
        stride = format.isInterleaved ? channels : 1
        let bytesPerSample = format.sampleType.bytesPerSample
        let bufferBytes = Int(frameCapacity) * stride * bytesPerSample
        let data = UnsafeMutableRawPointer.allocate(byteCount: max(16, bufferBytes * bufferCount), alignment: 16)
        data.initializeMemory(as: UInt8.self, repeating: 0, count: max(16, bufferBytes * bufferCount))
        self.data = data
        deallocator = nil
        callerList = nil
        channelTable = .allocate(byteCount: bufferCount * MemoryLayout<UnsafeMutableRawPointer>.stride,
                                 alignment: MemoryLayout<UnsafeMutableRawPointer>.alignment)
        switch format.sampleType {
        case .float32: Self.fill(channelTable, as: Float.self, data: data, count: bufferCount, bufferBytes: bufferBytes)
        case .float64: Self.fill(channelTable, as: Double.self, data: data, count: bufferCount, bufferBytes: bufferBytes)
        case .int16: Self.fill(channelTable, as: Int16.self, data: data, count: bufferCount, bufferBytes: bufferBytes)
        case .int32: Self.fill(channelTable, as: Int32.self, data: data, count: bufferCount, bufferBytes: bufferBytes)
        case .int24: fatalError("unreachable: int24 is .otherFormat")
        }
        bufferList = AudioBufferList.allocate(maximumBuffers: bufferCount)
        for b in 0..<bufferCount {
            bufferList[b] = AudioBuffer(mNumberChannels: UInt32(stride), mDataByteSize: 0,
                                        mData: data + b * bufferBytes)
        }
    }

    /// A buffer over the memory of `bufferList`, without copying it, as AVAudioPCMBuffer's
    /// initializer of that name: one buffer per channel (one for an interleaved format), each
    /// `mDataByteSize` bytes, all the same size, a whole number of frames; ``frameCapacity``
    /// and ``frameLength`` are that many frames. `deallocator` (if any) is called with
    /// `bufferList` when the buffer goes away, so that the caller can release the memory. Nil
    /// when the list does not fit the format (buffer count, sizes, a nil `mData`) or the format
    /// is `.otherFormat`.
    public init?(pcmFormat format: AudioFormat, bufferListNoCopy bufferList: UnsafePointer<AudioBufferList>,
                 deallocator: ((UnsafePointer<AudioBufferList>) -> Void)? = nil) {
        guard format.commonFormat != .otherFormat else { return nil }
        let channels = Int(format.channelCount)
        let bufferCount = format.isInterleaved ? 1 : channels
        let given = UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: bufferList))
        guard given.count == bufferCount, let first = given.first else { return nil }
        let bytes = Int(first.mDataByteSize)
        let frameBytes = format.bytesPerFrame
        guard bytes % frameBytes == 0, given.allSatisfy({ Int($0.mDataByteSize) == bytes && $0.mData != nil }) else { return nil }
        self.format = format
        frameCapacity = AudioFrameCount(bytes / frameBytes)
        stride = format.isInterleaved ? channels : 1
        data = nil
        self.deallocator = deallocator
        callerList = bufferList
        let channelTable = UnsafeMutableRawPointer.allocate(byteCount: bufferCount * MemoryLayout<UnsafeMutableRawPointer>.stride,
                                                            alignment: MemoryLayout<UnsafeMutableRawPointer>.alignment)
        self.channelTable = channelTable
        func bind<T>(_: T.Type) {
            let table = channelTable.bindMemory(to: UnsafeMutablePointer<T>.self, capacity: bufferCount)
            for b in 0..<bufferCount {
                (table + b).initialize(to: given[b].mData!.bindMemory(to: T.self, capacity: bytes / MemoryLayout<T>.size))
            }
        }
        switch format.sampleType {
        case .float32: bind(Float.self)
        case .float64: bind(Double.self)
        case .int16: bind(Int16.self)
        case .int32: bind(Int32.self)
        case .int24: fatalError("unreachable: int24 is .otherFormat")
        }
        self.bufferList = AudioBufferList.allocate(maximumBuffers: bufferCount)
        for b in 0..<bufferCount {
            self.bufferList[b] = AudioBuffer(mNumberChannels: UInt32(stride), mDataByteSize: UInt32(bytes), mData: given[b].mData)
        }
        validFrames = frameCapacity
    }

    /// Binds the table to `UnsafeMutablePointer<T>` and points entry `b` at buffer `b`.
    private static func fill<T>(_ table: UnsafeMutableRawPointer, as: T.Type, data: UnsafeMutableRawPointer,
                                count: Int, bufferBytes: Int) {
        let typed = table.bindMemory(to: UnsafeMutablePointer<T>.self, capacity: count)
        for b in 0..<count {
            (typed + b).initialize(to: (data + b * bufferBytes).bindMemory(to: T.self, capacity: bufferBytes / MemoryLayout<T>.size))
        }
    }

    deinit {
        data?.deallocate()
        channelTable.deallocate()
        free(bufferList.unsafeMutablePointer)
        if let deallocator, let callerList { deallocator(callerList) }
    }

    /// The valid frames, at most ``frameCapacity``. Setting it also sets the `mDataByteSize` of
    /// every buffer in ``audioBufferList``; a value above the capacity stops the program.
    /// Real-time safe.
    public var frameLength: AudioFrameCount {
        get { validFrames }
        set {
            guard newValue <= frameCapacity else {
                fatalError("AudioPCMBuffer.frameLength: \(newValue) exceeds frameCapacity \(frameCapacity)")
            }
            validFrames = newValue
            let bytes = UInt32(Int(newValue) * format.bytesPerFrame)
            for b in 0..<bufferList.count { bufferList.buffers[b].mDataByteSize = bytes }
        }
    }

    /// One pointer per channel (one in all for an interleaved format) to 32-bit float samples;
    /// nil unless the format is `.pcmFormatFloat32`.
    public var floatChannelData: UnsafePointer<UnsafeMutablePointer<Float>>? { table(.pcmFormatFloat32) }

    /// One pointer per channel (one in all for an interleaved format) to 16-bit integer samples;
    /// nil unless the format is `.pcmFormatInt16`.
    public var int16ChannelData: UnsafePointer<UnsafeMutablePointer<Int16>>? { table(.pcmFormatInt16) }

    /// One pointer per channel (one in all for an interleaved format) to 32-bit integer samples;
    /// nil unless the format is `.pcmFormatInt32`.
    public var int32ChannelData: UnsafePointer<UnsafeMutablePointer<Int32>>? { table(.pcmFormatInt32) }

    @inline(__always)
    private func table<T>(_ common: AudioCommonFormat) -> UnsafePointer<UnsafeMutablePointer<T>>? {
        guard format.commonFormat == common else { return nil }
        return UnsafePointer(channelTable.assumingMemoryBound(to: UnsafeMutablePointer<T>.self))
    }

    /// The buffer's memory as a CoreAudio buffer list: one buffer per channel (or one
    /// interleaved buffer), `mDataByteSize` covering ``frameLength`` frames.
    public var audioBufferList: UnsafePointer<AudioBufferList> { bufferList.unsafePointer }

    /// The same list, writable (for calls that fill a list). Changing its `mDataByteSize` fields
    /// does not change ``frameLength``; set that yourself.
    public var mutableAudioBufferList: UnsafeMutablePointer<AudioBufferList> { bufferList.unsafeMutablePointer }

    /// The first byte of buffer `index` (a channel, or the interleaved data). Real-time safe.
    @inline(__always)
    func bufferData(_ index: Int) -> UnsafeMutableRawPointer {
        channelTable.load(fromByteOffset: index * MemoryLayout<UnsafeMutableRawPointer>.stride, as: UnsafeMutableRawPointer.self)
    }
}
