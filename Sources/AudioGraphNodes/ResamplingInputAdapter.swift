// Implicit sample-rate conversion of one input bus (mixer, environment, converter): a Resampler on a pull source.

/// Converts one input bus from its source's rate to the node's rate with ``Resampler``
/// (libsoxr at quality `best` unless another quality is asked for), pulling the source on
/// its own timeline. The resampler asks for fixed blocks; the adapter pulls them in pieces of at
/// most `maximumFramesPerSlice`, so the result depends neither on the slice size nor on the
/// request sizes.
///
/// The converter node changes the quality at run time: it makes a new resampler with
/// ``makeResampler(quality:)`` on a control thread and swaps it in on the render thread with
/// ``replaceResampler(_:)``.
///
/// Thread safety: created on a control thread; `pull`, `start` and ``replaceResampler(_:)`` on
/// the render thread only; ``makeResampler(quality:)`` on a control thread.
final class ResamplingInputAdapter: InputAdapter, @unchecked Sendable {
    // MARK: Immutable after init
    let channelCount: Int
    let sourceSampleRate: Double
    let targetSampleRate: Double
    private let maximumFramesPerSlice: Int
    private let output: ChannelBufferStorage
    private let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    // MARK: Render thread only
    /// The resampler in use (set at init; replaced by ``replaceResampler(_:)``).
    private(set) var resampler: Resampler?
    private var upstream: UpstreamSource?
    private var upstreamTime: Int64 = 0

    init(nodeID: String, sourceFormat: StreamFormat, targetSampleRate: Double, maximumFramesPerSlice: Int,
         quality: Resampler.Quality = .best) throws(AudioGraphError) {
        channelCount = sourceFormat.channelCount
        sourceSampleRate = sourceFormat.sampleRate
        self.targetSampleRate = targetSampleRate
        self.maximumFramesPerSlice = maximumFramesPerSlice
        output = ChannelBufferStorage(channelCount: channelCount, capacity: maximumFramesPerSlice)
        outputPointers = .allocate(capacity: max(1, channelCount))
        for c in 0..<channelCount { (outputPointers + c).initialize(to: output.list.channel(c)) }
        super.init()
        do {
            resampler = try makeResampler(quality: quality)
        } catch {
            throw Self.conversionError(nodeID: nodeID, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate, error)
        }
    }

    /// Throws what ``init(nodeID:sourceFormat:targetSampleRate:maximumFramesPerSlice:quality:)``
    /// throws for arguments the resampler refuses, without allocating (the graph's resolve step;
    /// see ``GraphNode/checkInputAdapter(bus:sourceFormat:targetSampleRate:)``).
    static func check(nodeID: String, sourceFormat: StreamFormat, targetSampleRate: Double) throws(AudioGraphError) {
        do {
            try Resampler.check(channelCount: sourceFormat.channelCount, inputSampleRate: sourceFormat.sampleRate,
                                outputSampleRate: targetSampleRate)
        } catch {
            throw conversionError(nodeID: nodeID, sourceFormat: sourceFormat, targetSampleRate: targetSampleRate, error)
        }
    }

    static func conversionError(nodeID: String, sourceFormat: StreamFormat, targetSampleRate: Double,
                                        _ error: ResamplerError) -> AudioGraphError {
        let why: String
        if case .unsupportedRatio = error {
            why = "beyond the largest ratio one conversion bridges (\(ParameterInfo.format(Resampler.maximumConversionRatio)):1 either way; convert in steps)"
        } else {
            why = "\(error)"
        }
        return .formatNotSupported(node: nodeID, reason: "cannot convert \(ParameterInfo.format(sourceFormat.sampleRate)) Hz "
                                   + "to \(ParameterInfo.format(targetSampleRate)) Hz, \(why)")
    }

    deinit { outputPointers.deallocate() }

    /// A resampler for this connection, pulling through this adapter (control thread: allocates).
    func makeResampler(quality: Resampler.Quality) throws(ResamplerError) -> Resampler {
        try Resampler(channelCount: channelCount, inputSampleRate: sourceSampleRate, outputSampleRate: targetSampleRate,
                      quality: quality) { [unowned(unsafe) self] buffers, count in
            self.provide(buffers, count)
        }
    }

    /// Swaps in another resampler (a quality change) and returns the old one, to be released off
    /// the render thread. The new one continues from the current source frame. Real-time safe.
    func replaceResampler(_ new: Resampler) -> Resampler? {
        let old = resampler
        resampler = new
        return old
    }

    /// The resampler asks for input: pull the source in pieces the graph's buffers hold. Render thread.
    private func provide(_ buffers: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, _ count: Int) -> Int {
        guard let upstream else { return 0 }
        var done = 0
        while done < count {
            let n = min(maximumFramesPerSlice, count - done)
            let input = upstream.pull(sampleTime: upstreamTime, frameCount: n)
            upstreamTime += Int64(n)
            for c in 0..<buffers.count {
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
        resampler?.reset()
    }

    override func pull(context: RenderContext, upstream: UpstreamSource) -> InputBuffer {
        self.upstream = upstream
        let n = context.frameCount
        let got = resampler?.read(into: UnsafeBufferPointer(start: outputPointers, count: channelCount), frameCount: n) ?? 0
        if got < n {
            for c in 0..<channelCount { (output.list.channel(c) + got).update(repeating: 0, count: n - got) }
        }
        self.upstream = nil
        return InputBuffer(buffer: output.list, isSilent: false)
    }
}
