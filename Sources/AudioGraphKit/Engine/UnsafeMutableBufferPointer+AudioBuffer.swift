// The CoreAudio Swift overlay's typed views of an AudioBuffer's memory.

extension UnsafeMutableBufferPointer {
    /// The samples of `audioBuffer` as a typed buffer: `mData` for `mDataByteSize / stride`
    /// elements, as the CoreAudio Swift overlay offers (Apple's SignalGenerator sample writes
    /// a source node's output through `UnsafeMutableBufferPointer<Float>(buffer)`). A buffer
    /// without memory gives an empty pointer.
    public init(_ audioBuffer: AudioBuffer) {
        let count = Int(audioBuffer.mDataByteSize) / MemoryLayout<Element>.stride
        self.init(start: audioBuffer.mData?.bindMemory(to: Element.self, capacity: count), count: audioBuffer.mData == nil ? 0 : count)
    }
}

extension UnsafeBufferPointer {
    /// The samples of `audioBuffer` as a read-only typed buffer (see `UnsafeMutableBufferPointer.init(_:)`).
    public init(_ audioBuffer: AudioBuffer) {
        self.init(UnsafeMutableBufferPointer<Element>(audioBuffer))
    }
}
