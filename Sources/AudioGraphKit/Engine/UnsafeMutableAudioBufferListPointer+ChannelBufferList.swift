// Pointing a CoreAudio buffer list at the core's float channels (for source/sink render blocks).

extension UnsafeMutableAudioBufferListPointer {
    /// Makes the list describe `frameCount` frames of every channel of `channels` from frame
    /// `frame`: one deinterleaved 32-bit float buffer per channel (`mNumberChannels` 1,
    /// `mDataByteSize` `frameCount × 4`, `mData` the channel's samples), and sets ``count`` to
    /// the channel count. The list must have room for that many buffers: `maximumBuffers` is what
    /// it was allocated for (``AudioBufferList/allocate(maximumBuffers:)``). Real-time safe.
    package func point(at channels: ChannelBufferList, frame: Int = 0, frameCount: Int, maximumBuffers: Int) {
        guard channels.channelCount <= maximumBuffers else {
            fatalError("UnsafeMutableAudioBufferListPointer.point(at:): \(channels.channelCount) channels, room for \(maximumBuffers) buffers")
        }
        guard frame >= 0 && frameCount >= 0 && frame + frameCount <= channels.capacity else {
            fatalError("UnsafeMutableAudioBufferListPointer.point(at:): frames \(frame)..<\(frame + frameCount) outside the capacity \(channels.capacity)")
        }
        count = channels.channelCount
        let bytes = UInt32(frameCount * MemoryLayout<Float>.size)
        for c in 0..<channels.channelCount {
            buffers[c] = AudioBuffer(mNumberChannels: 1, mDataByteSize: bytes, mData: UnsafeMutableRawPointer(channels.channel(c) + frame))
        }
    }
}
