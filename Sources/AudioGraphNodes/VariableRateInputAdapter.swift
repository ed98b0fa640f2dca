// An environment input read at its source's own rate (AVAudio3DMixing `rate`), through the varispeed's resampler.
import AudioGraphCore

/// Plays one input bus at the rate its node gives per frame (the environment's `input.N.rate`):
/// output frame `n` is the input at position `t_n`, `t_{n+1} = t_n + rate_n`, made by the
/// varispeed's ``VariableRateResampler`` (windowed sinc, sample-exact per frame). An input at
/// another sample rate is first converted by a ``ResamplingInputAdapter``.
///
/// Until the first frame at a rate other than 1 the input is passed through on the clock it is
/// pulled with, unchanged (the same samples, the same timing as an input without this adapter),
/// while its last frames fill the resampler's history; from that frame on (until the
/// connection starts again) the input is read on its own timeline, ahead by up to
/// ``VariableRateResampler/lookahead(rate:)`` frames, and the waveform continues without a jump
/// (the kernel reaches back into the frames already played).
///
/// The node writes the slice's rates into the shared ``Rates`` just before it pulls the input
/// (one pull at a time, on the render thread), so a rate changed by a parameter set, a change
/// list or automation reaches the resampler at its frame.
///
/// Thread safety: created on a control thread; `pull` and `start` on the render thread only.
final class VariableRateInputAdapter: InputAdapter, @unchecked Sendable {
    /// The rates of the slice being pulled (`capacity` frames), shared by a node's kernel, which
    /// writes them, and its adapters, which read them during the pull that follows.
    ///
    /// Thread safety: allocated on a control thread; then render thread only.
    final class Rates: @unchecked Sendable {
        let values: UnsafeMutablePointer<Float>
        let capacity: Int

        init(capacity: Int) {
            self.capacity = max(1, capacity)
            values = .allocate(capacity: self.capacity)
            values.initialize(repeating: 1, count: self.capacity)
        }

        deinit { values.deallocate() }
    }

    // MARK: Immutable after init
    private let rates: Rates
    let resampler: VariableRateResampler
    /// The source's rate to the node's, when they differ.
    private let converter: ResamplingInputAdapter?
    private let maximumFramesPerSlice: Int

    // MARK: Render thread only
    /// The next frame of the source's timeline (when it needs no conversion).
    private var upstreamTime: Int64 = 0
    /// Whether a rate other than 1 has been met since the start (the input then runs on its own timeline).
    private(set) var isVarying = false

    init(channelCount: Int, maximumFramesPerSlice: Int, rates: Rates, converter: ResamplingInputAdapter?) {
        self.rates = rates
        self.converter = converter
        self.maximumFramesPerSlice = maximumFramesPerSlice
        resampler = VariableRateResampler(channelCount: channelCount, maximumFrames: maximumFramesPerSlice)
        super.init()
    }

    override func start(atUpstreamSampleTime sampleTime: Int64) {
        upstreamTime = sampleTime
        converter?.start(atUpstreamSampleTime: sampleTime)
        resampler.reset()
        isVarying = false
    }

    /// The next `frameCount` frames of the input (converted to the node's rate). Render thread.
    @inline(__always)
    private func read(_ frameCount: Int, _ context: RenderContext, _ upstream: UpstreamSource) -> InputBuffer {
        if let converter {
            return converter.pull(context: RenderContext(sampleTime: context.sampleTime, frameCount: frameCount,
                                                         sampleRate: context.sampleRate), upstream: upstream)
        }
        let input = upstream.pull(sampleTime: upstreamTime, frameCount: frameCount)
        upstreamTime += Int64(frameCount)
        return input
    }

    override func pull(context: RenderContext, upstream: UpstreamSource) -> InputBuffer {
        let n = min(context.frameCount, rates.capacity)
        let r = rates.values
        if !isVarying {
            var atOne = true
            for i in 0..<n where r[i] != 1 { atOne = false; break }
            if atOne {
                let input = read(n, context, upstream)
                let silent = input.isSilent
                resampler.append(count: n) { c in
                    silent || c >= input.channelCount ? nil : UnsafePointer(input.buffer.channel(c))
                }
                return input
            }
            isVarying = true
        }
        resampler.rates.update(from: r, count: n)
        let limit = maximumFramesPerSlice
        resampler.process(frameCount: n) { buffers, count in
            var done = 0
            while done < count {
                let m = min(limit, count - done)
                let input = read(m, context, upstream)
                for c in 0..<buffers.count { InputBuffer.copyChannel(c, of: input, to: buffers[c] + done, count: m) }
                done += m
            }
        }
        return InputBuffer(buffer: resampler.output.list, isSilent: false)
    }
}
