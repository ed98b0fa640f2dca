// The converter node's input: sample-rate conversion with a chosen libsamplerate quality.

/// Converts a converter node's input from its source's rate to the node's rate with a
/// ``Resampler`` of the node's `quality`, pulling the source on its own timeline in pieces of at
/// most `maximumFramesPerSlice` frames. The resampler works in fixed blocks, so the converted
/// audio does not depend on the slice size.
///
/// Thread safety: created on a control thread; `pull`, `start` and ``replaceResampler(_:)``
/// on the render thread only. ``makeResampler(quality:)`` on a control thread.
final class ConverterInputAdapter: InputAdapter, @unchecked Sendable {
    let channelCount: Int
    let sourceSampleRate: Double
    let targetSampleRate: Double
    private let maximumFramesPerSlice: Int
    private let output: AudioBufferStorage
    private let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    // MARK: Render thread only
    private(set) var resampler: Resampler?
    private var upstream: UpstreamSource?
    private var upstreamTime: Int64 = 0

    init(nodeID: String, sourceFormat: StreamFormat, targetSampleRate: Double, quality: ConverterQuality,
         maximumFramesPerSlice: Int) throws(AudioGraphError) {
        channelCount = sourceFormat.channelCount
        sourceSampleRate = sourceFormat.sampleRate
        self.targetSampleRate = targetSampleRate
        self.maximumFramesPerSlice = maximumFramesPerSlice
        output = AudioBufferStorage(channelCount: channelCount, capacity: maximumFramesPerSlice)
        outputPointers = .allocate(capacity: max(1, channelCount))
        for c in 0..<channelCount { (outputPointers + c).initialize(to: output.list.channel(c)) }
        super.init()
        do {
            resampler = try makeResampler(quality: quality)
        } catch {
            throw .formatNotSupported(node: nodeID, reason: "cannot convert \(sourceFormat.sampleRate) Hz to \(targetSampleRate) Hz: \(error)")
        }
    }

    deinit {
        outputPointers.deallocate()
    }

    /// A resampler for this connection, pulling through this adapter (control thread: allocates).
    func makeResampler(quality: ConverterQuality) throws(ResamplerError) -> Resampler {
        try Resampler(channelCount: channelCount, inputSampleRate: sourceSampleRate, outputSampleRate: targetSampleRate,
                      quality: quality) { [unowned(unsafe) self] channels, count in
            self.provide(channels, count)
        }
    }

    /// Swaps in another resampler (a quality change) and returns the old one, to be released off
    /// the render thread. The new one continues from the current source frame. Real-time safe.
    func replaceResampler(_ new: Resampler) -> Resampler? {
        let old = resampler
        resampler = new
        return old
    }

    /// The resampler asks for input: `count` frames of the source, in slices it can render.
    private func provide(_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, _ count: Int) -> Int {
        guard let upstream else { return 0 }
        var done = 0
        while done < count {
            let m = min(maximumFramesPerSlice, count - done)
            let input = upstream.pull(sampleTime: upstreamTime, frameCount: m)
            upstreamTime += Int64(m)
            for c in 0..<channels.count {
                let dst = channels[c] + done
                if c < input.channelCount && !input.isSilent {
                    dst.update(from: input.buffer.channel(c), count: m)
                } else {
                    dst.update(repeating: 0, count: m)
                }
            }
            done += m
        }
        return count
    }

    override func start(atUpstreamSampleTime sampleTime: Int64) {
        upstreamTime = sampleTime
        resampler?.reset()
    }

    override func pull(context: RenderContext, upstream: UpstreamSource) -> InputBuffer {
        self.upstream = upstream
        let n = context.frameCount
        if let resampler {
            resampler.read(into: UnsafeBufferPointer(start: outputPointers, count: channelCount), frameCount: n)
        } else {
            output.list.clear(frameCount: n)
        }
        self.upstream = nil
        return InputBuffer(buffer: output.list, isSilent: false)
    }
}
