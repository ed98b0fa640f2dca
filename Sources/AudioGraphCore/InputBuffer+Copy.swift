// Copying one channel of a pulled input (or silence when there is none): the one place nodes do it.

extension InputBuffer {
    /// Copies `count` frames of channel `channel` of `input`, from frame `offset` on, to
    /// `destination`; writes zeros instead when `input` is nil (nothing connected), silent, or
    /// has no such channel. Real-time safe.
    @inline(__always)
    package static func copyChannel(_ channel: Int, of input: InputBuffer?, from offset: Int = 0,
                                   to destination: UnsafeMutablePointer<Float>, count: Int) {
        if let input, !input.isSilent, channel < input.channelCount {
            destination.update(from: input.buffer.channel(channel) + offset, count: count)
        } else {
            destination.update(repeating: 0, count: count)
        }
    }

    /// True when the first `frameCount` frames of every channel of `buffer` are zero. Real-time safe.
    @inline(__always)
    package static func isAllZero(_ buffer: ChannelBufferList, frameCount n: Int) -> Bool {
        for c in 0..<buffer.channelCount {
            let y = buffer.channel(c)
            for i in 0..<n where y[i] != 0 { return false }
        }
        return true
    }
}
