// Implicit sample-rate conversion of one mixer or environment input (a Resampler on a pull source).

/// Converts one input bus from its source's rate to the node's rate with ``Resampler``
/// (libsamplerate, SINC_BEST_QUALITY), pulling the source on its own timeline. The resampler
/// asks for fixed blocks; the adapter pulls them in pieces of at most `maximumFramesPerSlice`,
/// so the result depends neither on the slice size nor on the request sizes.
///
/// Thread safety: created on a control thread; `pull` and `start` on the render thread only.
final class ResamplingInputAdapter: InputAdapter, @unchecked Sendable {
    private let channels: Int
    private let maximumFrames: Int
    private let output: AudioBufferStorage
    private let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private var resampler: Resampler!

    // MARK: Render thread only
    private var upstream: UpstreamSource?
    private var upstreamTime: Int64 = 0

    init(nodeID: String, sourceFormat: StreamFormat, targetSampleRate: Double, maximumFramesPerSlice: Int,
         quality: Resampler.Quality = .best) throws(AudioGraphError) {
        channels = sourceFormat.channelCount
        maximumFrames = maximumFramesPerSlice
        output = AudioBufferStorage(channelCount: channels, capacity: maximumFramesPerSlice)
        outputPointers = .allocate(capacity: channels)
        for c in 0..<channels { (outputPointers + c).initialize(to: output.list.channel(c)) }
        super.init()
        do {
            resampler = try Resampler(channelCount: channels, inputSampleRate: sourceFormat.sampleRate,
                                      outputSampleRate: targetSampleRate, quality: quality) { [unowned(unsafe) self] buffers, count in
                self.provide(buffers, count)
            }
        } catch {
            throw .formatNotSupported(node: nodeID, reason: "cannot convert \(ParameterInfo.format(sourceFormat.sampleRate)) Hz "
                                      + "to \(ParameterInfo.format(targetSampleRate)) Hz: \(error)")
        }
    }

    deinit { outputPointers.deallocate() }

    /// The resampler asks for input: pull the source in pieces the graph's buffers hold. Render thread.
    private func provide(_ buffers: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, _ count: Int) -> Int {
        guard let upstream else { return 0 }
        var done = 0
        while done < count {
            let n = min(maximumFrames, count - done)
            let input = upstream.pull(sampleTime: upstreamTime, frameCount: n)
            upstreamTime += Int64(n)
            for c in 0..<channels {
                if c < input.channelCount && !input.isSilent {
                    (buffers[c] + done).update(from: input.buffer.channel(c), count: n)
                } else {
                    (buffers[c] + done).update(repeating: 0, count: n)
                }
            }
            done += n
        }
        return count
    }

    override func start(atUpstreamSampleTime sampleTime: Int64) {
        upstreamTime = sampleTime
        resampler.reset()
    }

    override func pull(context: RenderContext, upstream: UpstreamSource) -> InputBuffer {
        self.upstream = upstream
        let n = context.frameCount
        let got = resampler.read(into: UnsafeBufferPointer(start: outputPointers, count: channels), frameCount: n)
        if got < n {
            for c in 0..<channels { (output.list.channel(c) + got).update(repeating: 0, count: n - got) }
        }
        self.upstream = nil
        return InputBuffer(buffer: output.list, isSilent: false)
    }
}
