// Pointer tables over a kernel's output channels for in-place DSP, plus the in-place kernel's copy-in and silence check.
import AudioGraphCore

/// The input and output channel-pointer tables an in-place effect kernel (delay, eq) hands to its
/// DSP: both point at the same frame of every channel of the kernel's output buffer, which holds
/// the input copied in by ``loadInput(_:into:frameCount:)``. The tables are allocated once, for
/// the most channels the kernel has, and repointed per slice (or per frame) without allocating.
///
/// Thread safety: created and released on a control thread (the kernel's init and deinit); every
/// other member is for the render thread only and real-time safe.
final class ChannelPointers: @unchecked Sendable {
    // MARK: Immutable after init
    /// The most channels the tables hold.
    let capacity: Int
    private let inputTable: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    // MARK: Render thread only
    /// The channels the tables point at now.
    private(set) var count = 0

    /// Tables for up to `capacity` channels (control thread: allocates).
    init(capacity: Int) {
        self.capacity = capacity
        inputTable = .allocate(capacity: max(1, capacity))
        outputTable = .allocate(capacity: max(1, capacity))
    }

    deinit {
        inputTable.deallocate()
        outputTable.deallocate()
    }

    /// Points both tables at frame `frame` of every channel of `buffer` (at most `capacity`).
    @inline(__always)
    func point(at buffer: ChannelBufferList, frame: Int = 0) {
        count = min(buffer.channelCount, capacity)
        for c in 0..<count {
            let p = buffer.channel(c) + frame
            outputTable[c] = p
            inputTable[c] = UnsafePointer(p)
        }
    }

    /// The input table, `count` channels (valid until the next `point`).
    var inputs: UnsafeBufferPointer<UnsafePointer<Float>> { UnsafeBufferPointer(start: inputTable, count: count) }
    /// The output table, `count` channels (valid until the next `point`).
    var outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>> { UnsafeBufferPointer(start: outputTable, count: count) }

    /// Copies a pulled input into `output` for in-place processing: channels the input lacks,
    /// and all of them when it is absent or silent, are zeroed. Returns whether the input was
    /// silent (absent counts as silent).
    @inline(__always) @discardableResult
    static func loadInput(_ input: InputBuffer?, into output: ChannelBufferList, frameCount n: Int) -> Bool {
        if let input, !input.isSilent {
            for c in 0..<output.channelCount { InputBuffer.copyChannel(c, of: input, to: output.channel(c), count: n) }
            return false
        }
        output.clear(frameCount: n)
        return true
    }

    /// True when the first `frameCount` frames of every channel of `buffer` are zero.
    @inline(__always)
    static func isAllZero(_ buffer: ChannelBufferList, frameCount n: Int) -> Bool {
        InputBuffer.isAllZero(buffer, frameCount: n)
    }
}
