// Implicit sample-rate conversion of one mixer or environment input, with libsamplerate.
import CSampleRate

/// Converts one input bus from its source's rate to the node's rate with libsamplerate
/// (SINC_BEST_QUALITY), pulling the source on its own timeline in fixed chunks (so the result
/// does not depend on the slice size). The chunk size is `min(256, maximumFramesPerSlice)`.
///
/// Thread safety: created on a control thread; `pull` and `start` on the render thread only.
/// libsamplerate's callback API allocates nothing while reading.
final class ResamplingInputAdapter: InputAdapter, @unchecked Sendable {
    private let channels: Int
    private let ratio: Double
    private let chunk: Int
    private let output: AudioBufferStorage
    private let interleavedIn: UnsafeMutablePointer<Float>
    private let interleavedOut: UnsafeMutablePointer<Float>
    private var state: OpaquePointer?

    // MARK: Render thread only
    private var upstream: UpstreamSource?
    private var upstreamTime: Int64 = 0

    init(nodeID: String, sourceFormat: StreamFormat, targetSampleRate: Double, maximumFramesPerSlice: Int,
         converter: Int32 = Int32(SRC_SINC_BEST_QUALITY)) throws(AudioGraphError) {
        channels = sourceFormat.channelCount
        ratio = targetSampleRate / sourceFormat.sampleRate
        chunk = min(256, maximumFramesPerSlice)
        output = AudioBufferStorage(channelCount: channels, capacity: maximumFramesPerSlice)
        interleavedIn = .allocate(capacity: chunk * channels)
        interleavedIn.initialize(repeating: 0, count: chunk * channels)
        interleavedOut = .allocate(capacity: maximumFramesPerSlice * channels)
        interleavedOut.initialize(repeating: 0, count: maximumFramesPerSlice * channels)
        super.init()
        guard src_is_valid_ratio(ratio) != 0 else {
            throw .formatNotSupported(node: nodeID, reason: "cannot convert \(sourceFormat.sampleRate) Hz to \(targetSampleRate) Hz")
        }
        var error: Int32 = 0
        state = src_callback_new({ data, out in
            let adapter = Unmanaged<ResamplingInputAdapter>.fromOpaque(data!).takeUnretainedValue()
            return adapter.provide(out!)
        }, converter, Int32(channels), &error, Unmanaged.passUnretained(self).toOpaque())
        guard state != nil else {
            throw .nodeSetupFailed(node: nodeID, reason: "libsamplerate: " + String(cString: src_strerror(error)))
        }
    }

    deinit {
        if let state { src_delete(state) }
        interleavedIn.deallocate()
        interleavedOut.deallocate()
    }

    /// libsamplerate asks for input: one chunk of the source, interleaved. Render thread.
    private func provide(_ data: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) -> Int {
        guard let upstream else { return 0 }
        let input = upstream.pull(sampleTime: upstreamTime, frameCount: chunk)
        upstreamTime += Int64(chunk)
        let ch = channels
        for c in 0..<min(ch, input.channelCount) {
            let src = input.buffer.channel(c)
            for i in 0..<chunk { interleavedIn[i * ch + c] = src[i] }
        }
        data.pointee = interleavedIn
        return chunk
    }

    override func start(atUpstreamSampleTime sampleTime: Int64) {
        upstreamTime = sampleTime
        if let state { src_reset(state) }
    }

    override func pull(context: RenderContext, upstream: UpstreamSource) -> InputBuffer {
        self.upstream = upstream
        let n = context.frameCount
        var done = 0
        while done < n {
            let got = Int(src_callback_read(state, ratio, n - done, interleavedOut + done * channels))
            if got <= 0 { break }
            done += got
        }
        let out = output.list
        for c in 0..<channels {
            let dst = out.channel(c)
            for i in 0..<done { dst[i] = interleavedOut[i * channels + c] }
            for i in done..<n { dst[i] = 0 }
        }
        self.upstream = nil
        return InputBuffer(buffer: out, isSilent: false)
    }
}
