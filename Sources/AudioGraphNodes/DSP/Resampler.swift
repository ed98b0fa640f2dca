// Streaming, pull-driven sample-rate conversion of N non-interleaved channels with libsamplerate.

import CSampleRate

/// A streaming sample-rate converter for a pull graph: the consumer asks for exactly N output
/// frames and the resampler pulls input frames on demand through the ``InputProvider`` given at
/// init (libsamplerate's callback API, `src_callback_new` / `src_callback_read`).
///
/// Determinism: libsamplerate is always driven in fixed blocks of ``blockFrames`` output frames,
/// and the provider is always asked for ``blockFrames`` input frames, whatever the consumer's
/// request sizes; surplus output waits in an internal FIFO. So the output, and the sequence of
/// input frames pulled, are identical however the output is requested.
///
/// Latency: the sinc converters are time-aligned (output frame k is the input at time
/// k / ratio); the FIFO only computes ahead, it adds no delay to the signal.
///
/// Thread safety: not thread-safe; `init` allocates (control thread); ``read(into:frameCount:)``
/// and ``reset()`` are real-time safe when the provider is (libsamplerate does not allocate
/// while converting) and must be called from one thread at a time, which is also the thread the
/// provider is called on.
public final class Resampler {

    /// The libsamplerate converters, by the graph format's names (`best` = SRC_SINC_BEST_QUALITY,
    /// `medium` = SRC_SINC_MEDIUM_QUALITY, `fastest` = SRC_SINC_FASTEST, `linear` = SRC_LINEAR,
    /// `zeroOrderHold` = SRC_ZERO_ORDER_HOLD).
    public typealias Quality = ConverterQuality

    /// Supplies input: fill up to `frameCount` frames of each channel buffer and return how many
    /// frames were written; fewer than asked means the input has ended after them (0: ended).
    /// Called from inside ``read(into:frameCount:)``, on its thread; must be real-time safe when
    /// `read` is used on the render thread.
    public typealias InputProvider = (_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                                      _ frameCount: Int) -> Int

    /// Output frames per libsamplerate call and input frames per provider call (fixed, so the
    /// output does not depend on request sizes or on the graph's maximum slice).
    public static let blockFrames = 256

    // MARK: Fixed at init
    public let channelCount: Int
    public let inputSampleRate: Double
    public let outputSampleRate: Double
    /// outputSampleRate / inputSampleRate.
    public let ratio: Double
    public let quality: Quality
    let provider: InputProvider
    /// libsamplerate's state (set at the end of init, never nil afterwards).
    private var state: OpaquePointer?
    /// Non-interleaved input scratch: one buffer of blockFrames per channel, and their pointers.
    let inputChannels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let inputStorage: UnsafeMutablePointer<Float>
    /// Interleaved input handed to libsamplerate.
    let inputInterleaved: UnsafeMutablePointer<Float>
    /// Interleaved output block (the FIFO's storage).
    let outputInterleaved: UnsafeMutablePointer<Float>

    // MARK: Render thread only
    /// Frames of `outputInterleaved` not yet handed out, starting at `fifoStart`.
    var fifoStart = 0
    var fifoCount = 0
    /// The provider reported the end of its input.
    var inputEnded = false
    /// libsamplerate has no more output (input ended and drained, or an error).
    var outputEnded = false

    /// Creates a converter for `channelCount` channels from `inputSampleRate` to
    /// `outputSampleRate` with `quality`, pulling input through `provider`. Allocates (control
    /// thread).
    public init(channelCount: Int, inputSampleRate: Double, outputSampleRate: Double,
                quality: Quality = .best, provider: @escaping InputProvider) throws(ResamplerError) {
        guard channelCount > 0 else { throw .invalidChannelCount(channelCount) }
        let ratio = outputSampleRate / inputSampleRate
        guard inputSampleRate > 0, outputSampleRate > 0, ratio.isFinite, ratio >= 1.0 / GraphDescription.maximumConversionRatio,
              ratio <= GraphDescription.maximumConversionRatio else {
            throw .unsupportedRatio(inputSampleRate: inputSampleRate, outputSampleRate: outputSampleRate)
        }
        self.channelCount = channelCount
        self.inputSampleRate = inputSampleRate
        self.outputSampleRate = outputSampleRate
        self.ratio = ratio
        self.quality = quality
        self.provider = provider
        let block = Self.blockFrames
        inputStorage = .allocate(capacity: block * channelCount)
        inputStorage.initialize(repeating: 0, count: block * channelCount)
        inputChannels = .allocate(capacity: channelCount)
        for c in 0..<channelCount { (inputChannels + c).initialize(to: inputStorage + c * block) }
        inputInterleaved = .allocate(capacity: block * channelCount)
        inputInterleaved.initialize(repeating: 0, count: block * channelCount)
        outputInterleaved = .allocate(capacity: block * channelCount)
        outputInterleaved.initialize(repeating: 0, count: block * channelCount)

        var error: Int32 = 0
        // Every other stored property is set, so self can be the callback's context (unretained:
        // the state is deleted in deinit, before self goes away).
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let s = src_callback_new(Self.callback, quality.converterType, Int32(channelCount), &error, context) else {
            throw .libsamplerate(code: error, message: String(cString: src_strerror(error)))
        }
        state = s
    }

    deinit {
        if let state { src_delete(state) }
        inputStorage.deallocate()
        inputChannels.deallocate()
        inputInterleaved.deallocate()
        outputInterleaved.deallocate()
    }

    /// libsamplerate's input callback: pulls one block from the provider and interleaves it.
    private static let callback: src_callback_t = { context, data in
        guard let context, let data else { return 0 }
        let me = Unmanaged<Resampler>.fromOpaque(context).takeUnretainedValue()
        return me.pullInput(data)
    }

    @inline(__always)
    private func pullInput(_ data: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) -> Int {
        data.pointee = inputInterleaved
        if inputEnded { return 0 }
        let block = Self.blockFrames
        let got = min(max(provider(UnsafeBufferPointer(start: inputChannels, count: channelCount), block), 0), block)
        if got < block { inputEnded = true }
        let n = channelCount
        for c in 0..<n {
            let src = inputChannels[c]
            for i in 0..<got { inputInterleaved[i * n + c] = src[i] }
        }
        return got
    }

    /// Writes exactly `frameCount` frames into each output channel (`output.count` must equal
    /// ``channelCount``), pulling input as needed. Returns the frames of real output; after the
    /// input has ended and drained, the rest is zero-filled. Real-time safe.
    @discardableResult
    public func read(into output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int {
        let n = channelCount
        var produced = 0
        while produced < frameCount {
            if fifoCount == 0 {
                if outputEnded { break }
                let got = Int(src_callback_read(state, ratio, Self.blockFrames, outputInterleaved))
                if got <= 0 { outputEnded = true; break }
                fifoStart = 0
                fifoCount = got
            }
            let m = min(fifoCount, frameCount - produced)
            let base = outputInterleaved + fifoStart * n
            for c in 0..<min(n, output.count) {
                let dst = output[c] + produced
                for i in 0..<m { dst[i] = base[i * n + c] }
            }
            fifoStart += m
            fifoCount -= m
            produced += m
        }
        if produced < frameCount {
            for c in 0..<output.count { (output[c] + produced).update(repeating: 0, count: frameCount - produced) }
        }
        return produced
    }

    /// Forgets all history (filter state, FIFO, end of input), as at creation. Real-time safe.
    public func reset() {
        src_reset(state)
        fifoStart = 0
        fifoCount = 0
        inputEnded = false
        outputEnded = false
    }
}

extension ConverterQuality {
    /// libsamplerate's converter type of this quality.
    var converterType: Int32 {
        switch self {
        case .best: return Int32(SRC_SINC_BEST_QUALITY)
        case .medium: return Int32(SRC_SINC_MEDIUM_QUALITY)
        case .fastest: return Int32(SRC_SINC_FASTEST)
        case .linear: return Int32(SRC_LINEAR)
        case .zeroOrderHold: return Int32(SRC_ZERO_ORDER_HOLD)
        }
    }
}
