// Pulling a graph through its generic output in the client format (rate and channels converted).

/// Renders an initialized graph whose output is a ``GenericOutputNode`` in that node's client
/// format — what `graph.render(frameCount:)` alone does not do: `render` returns the graph's own
/// rate and channel count, this converts the rate (``Resampler``, quality `best`) and the channel
/// count (the up/down-mix rules of ``ChannelMixing``) to the client format's, so that an
/// application writing a file labelled with the client format gets audio in that format. (The
/// sample type stays 32-bit float: converting it is the writer's job, as ``AudioFileWriter``
/// does.)
///
/// Thread safety: make it on a control thread after `initialize()`; then call ``render(frameCount:into:)``
/// from the one thread that renders the graph. Real-time safe after creation.
package final class GenericOutputRenderer {
    /// The graph pulled.
    package let graph: AudioGraph
    /// The format delivered: the client format's rate and channel count, float samples.
    package let clientFormat: StreamFormat

    // MARK: Render thread only
    private let mixed: ChannelBufferStorage
    private let silence: ChannelBufferStorage
    private var resampler: Resampler?
    private let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let graphChannels: Int

    /// - Throws: `.invalidState` when the graph is not initialized or its output is not a
    ///   generic output; `.formatNotSupported` for a rate conversion beyond the converter's range.
    package init(graph: AudioGraph) throws(AudioGraphError) {
        guard graph.isInitialized, let output = graph.outputNode as? GenericOutputNode else {
            throw .invalidState("GenericOutputRenderer needs an initialized graph whose output is a genericOutput")
        }
        let input = output.inputFormat ?? .canonical(sampleRate: graph.sampleRate, channelCount: 2)
        let client = output.clientFormat ?? input
        self.graph = graph
        clientFormat = StreamFormat(sampleRate: client.sampleRate, channelCount: client.channelCount)
        graphChannels = input.channelCount
        let slice = graph.maximumFramesPerSlice
        mixed = ChannelBufferStorage(channelCount: client.channelCount, capacity: slice)
        silence = ChannelBufferStorage(channelCount: max(input.channelCount, client.channelCount), capacity: slice)
        inputPointers = .allocate(capacity: max(1, input.channelCount))
        outputPointers = .allocate(capacity: max(1, client.channelCount))
        if client.sampleRate != input.sampleRate {
            do {
                resampler = try Resampler(channelCount: client.channelCount, inputSampleRate: input.sampleRate,
                                          outputSampleRate: client.sampleRate, quality: .best) { [unowned self] buffers, count in
                    self.pullConverted(into: buffers, count: count)
                }
            } catch {
                throw .formatNotSupported(node: output.id, reason: "\(error)")
            }
        }
    }

    deinit {
        inputPointers.deallocate()
        outputPointers.deallocate()
    }

    /// Writes `frameCount` frames of the client format into `destination` (at least the client
    /// format's channels, each holding `frameCount` frames): graph slices, remixed to the client
    /// channel count, resampled to the client rate. Returns `frameCount`. Real-time safe.
    @discardableResult
    package func render(frameCount: Int, into destination: UnsafeBufferPointer<UnsafeMutablePointer<Float>>) -> Int {
        if let resampler { return resampler.read(into: destination, frameCount: frameCount) }
        return pullConverted(into: destination, count: frameCount)
    }

    /// Graph frames, remixed to the client channel count, in slices of at most the graph's maximum.
    private func pullConverted(into destination: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, count: Int) -> Int {
        var done = 0
        while done < count {
            let n = min(graph.maximumFramesPerSlice, count - done)
            let result = graph.render(frameCount: n)
            let source = (result?.isSilent ?? true) ? silence.list : result!.buffer
            for c in 0..<graphChannels { inputPointers[c] = UnsafePointer(source.channel(min(c, source.channelCount - 1))) }
            for c in 0..<clientFormat.channelCount { outputPointers[c] = destination[c] + done }
            ChannelMixing.mix(input: UnsafeBufferPointer(start: inputPointers, count: graphChannels),
                              output: UnsafeBufferPointer(start: outputPointers, count: clientFormat.channelCount),
                              frameCount: n)
            done += n
        }
        return count
    }
}
