// Copying between an AudioPCMBuffer and the core's float ChannelBufferList, converting sample types.

extension AudioPCMBuffer {
    /// A buffer of `format` holding `frameCount` frames of `source` starting at `sourceFrame`,
    /// converted to the format's sample type and layout, with ``frameLength`` = `frameCount`
    /// (see ``copyFrames(from:sourceFrame:toFrame:frameCount:)``). Nil when `format` is not a PCM
    /// common format. Allocates: control threads only.
    package convenience init?(copying source: ChannelBufferList, sourceFrame: Int, frameCount: Int, format: AudioFormat) {
        guard frameCount >= 0 && frameCount <= Int(UInt32.max) else {
            fatalError("AudioPCMBuffer(copying:): bad frame count \(frameCount)")
        }
        self.init(pcmFormat: format, frameCapacity: AudioFrameCount(frameCount))
        copyFrames(from: source, sourceFrame: sourceFrame, toFrame: 0, frameCount: frameCount)
        frameLength = AudioFrameCount(frameCount)
    }

    /// Writes `frameCount` frames of the core's float channels, from frame `sourceFrame` of
    /// `source`, into this buffer from frame `toFrame`, converting to the buffer's sample type
    /// (integers: `round(x × 2^(bits-1))`, clipped, as ``SampleConversion``) and layout. Channels
    /// the source lacks are written as silence; extra source channels are ignored.
    /// ``frameLength`` is left alone. Real-time safe (no allocation, no lock).
    package func copyFrames(from source: ChannelBufferList, sourceFrame: Int, toFrame: Int, frameCount: Int) {
        guard sourceFrame >= 0 && frameCount >= 0 && sourceFrame + frameCount <= source.capacity else {
            fatalError("AudioPCMBuffer.copyFrames(from:): frames \(sourceFrame)..<\(sourceFrame + frameCount) outside the source's \(source.capacity)")
        }
        guard toFrame >= 0 && toFrame + frameCount <= Int(frameCapacity) else {
            fatalError("AudioPCMBuffer.copyFrames(from:): frames \(toFrame)..<\(toFrame + frameCount) outside the capacity \(frameCapacity)")
        }
        let type = format.sampleType, bytes = type.bytesPerSample
        for c in 0..<Int(format.channelCount) {
            let destination = channelStart(c) + toFrame * stride * bytes
            if c < source.channelCount {
                SampleConversion.write(source.channel(c) + sourceFrame, count: frameCount, to: destination, as: type,
                                       stride: stride)
            } else {
                for i in 0..<frameCount {
                    (destination + i * stride * bytes).initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
                }
            }
        }
    }

    /// Reads `frameCount` frames of this buffer, from frame `fromFrame`, into the core's float
    /// channels of `destination` from frame `destinationFrame`, converting from the buffer's
    /// sample type (integers: `x / 2^(bits-1)`) and layout. Destination channels the buffer lacks
    /// are zeroed; extra buffer channels are ignored. Reads regardless of ``frameLength``.
    /// Real-time safe (no allocation, no lock).
    package func copyFrames(to destination: ChannelBufferList, destinationFrame: Int, fromFrame: Int, frameCount: Int) {
        guard destinationFrame >= 0 && frameCount >= 0 && destinationFrame + frameCount <= destination.capacity else {
            fatalError("AudioPCMBuffer.copyFrames(to:): frames \(destinationFrame)..<\(destinationFrame + frameCount) outside the destination's \(destination.capacity)")
        }
        guard fromFrame >= 0 && fromFrame + frameCount <= Int(frameCapacity) else {
            fatalError("AudioPCMBuffer.copyFrames(to:): frames \(fromFrame)..<\(fromFrame + frameCount) outside the capacity \(frameCapacity)")
        }
        let type = format.sampleType, bytes = type.bytesPerSample
        for c in 0..<destination.channelCount {
            let target = destination.channel(c) + destinationFrame
            if c < Int(format.channelCount) {
                SampleConversion.read(from: channelStart(c) + fromFrame * stride * bytes, as: type, stride: stride,
                                      count: frameCount, into: target)
            } else {
                target.update(repeating: 0, count: frameCount)
            }
        }
    }

    /// Where channel `c`'s first sample is: its own buffer, or its place in the interleaved one.
    @inline(__always)
    private func channelStart(_ c: Int) -> UnsafeMutableRawPointer {
        format.isInterleaved ? bufferData(0) + c * format.sampleType.bytesPerSample : bufferData(c)
    }
}
