// Streaming, pull-driven sample-rate conversion of N non-interleaved channels with libsoxr or libsamplerate.

import CSampleRate
import CSoxr

/// A streaming sample-rate converter for a pull graph: the consumer asks for exactly N output
/// frames and the resampler pulls input frames on demand through the ``InputProvider`` given at
/// init.
///
/// Engines: quality `best` runs libsoxr (`soxr_output` with an input function, very high
/// quality: 28-bit, steep, linear phase, one thread, input in split channels — no interleaving); the
/// other qualities run libsamplerate's callback API (`src_callback_new` / `src_callback_read`):
/// `sincBest` = SRC_SINC_BEST_QUALITY, `medium`, `fastest`, `linear`, `zeroOrderHold`.
///
/// Determinism: the engine is always driven in fixed blocks of ``blockFrames`` output frames,
/// and the provider is always asked for ``blockFrames`` input frames, whatever the consumer's
/// request sizes (libsoxr's own input requests are served from that block); surplus output
/// waits in an internal FIFO. So the output, and the sequence of input frames pulled, are
/// identical however the output is requested.
///
/// Latency: both engines are time-aligned (output frame k is the input at time k / ratio; the
/// filter delay is removed); the FIFO only computes ahead, it adds no delay to the signal.
///
/// Allocation: libsamplerate never allocates while converting. libsoxr sets its stages up and
/// grows its internal FIFOs during its first blocks (measured: 20 to 250 allocations within
/// the first 8 000 to 16 000 output frames, depending on the ratio), then never again. So
/// `init` *primes* it on the control thread: it converts a silent pre-roll of Z input frames,
/// Z a multiple of the rates' period (`inputRate / gcd(inputRate, outputRate)`) of at least
/// 32 768 frames, so that the pre-roll is exactly Q = Z · ratio output frames; the first Q
/// output frames (pre-roll only, before the signal starts) are then dropped by
/// ``read(into:frameCount:)``. The engine's history is then silence, as for a fresh one, at the
/// same phase: the output is the fresh engine's (measured: identical after the first block,
/// whose onset transient differs by less than -60 dB), and the render thread never allocates
/// (`ResamplerTests.testSoxrDoesNotAllocateFromTheFirstRead`). Rates that are not whole
/// numbers, or whose period is longer than 2^20 frames, are not primed (they allocate in their
/// first blocks, on the render thread).
///
/// Thread safety: not thread-safe; `init` allocates (control thread); ``read(into:frameCount:)``
/// and ``reset()`` are real-time safe when the provider is (with libsoxr's warm-up above) and
/// must be called from one thread at a time, which is also the thread the provider is called on.
package final class Resampler {

    /// The converter qualities, by the graph format's names (`best` = libsoxr VHQ; `sincBest`,
    /// `medium`, `fastest`, `linear`, `zeroOrderHold` = libsamplerate's converters).
    package typealias Quality = ConverterQuality

    /// Supplies input: fill up to `frameCount` frames of each channel buffer and return how many
    /// frames were written; fewer than asked means the input has ended after them (0: ended).
    /// Called from inside ``read(into:frameCount:)``, on its thread; must be real-time safe when
    /// `read` is used on the render thread.
    package typealias InputProvider = (_ channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                                      _ frameCount: Int) -> Int

    /// Output frames per engine call and input frames per provider call (fixed, so the
    /// output does not depend on request sizes or on the graph's maximum slice).
    package static let blockFrames = 256

    // MARK: Fixed at init
    package let channelCount: Int
    package let inputSampleRate: Double
    package let outputSampleRate: Double
    /// outputSampleRate / inputSampleRate.
    package let ratio: Double
    package let quality: Quality
    let provider: InputProvider
    /// libsamplerate's state (nil when libsoxr converts).
    private var state: OpaquePointer?
    /// libsoxr's state (nil when libsamplerate converts).
    private var soxr: soxr_t?
    /// Non-interleaved input block: one buffer of blockFrames per channel, and their pointers.
    let inputChannels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let inputStorage: UnsafeMutablePointer<Float>
    /// Interleaved input handed to libsamplerate.
    let inputInterleaved: UnsafeMutablePointer<Float>
    /// The interleaved output block (the FIFO's storage; libsoxr 0.1.3's `soxr_output` crashes
    /// with split output, so both engines write interleaved frames).
    let outputBlock: UnsafeMutablePointer<Float>
    /// libsoxr: per-channel pointers into the input block, at the served offset.
    private let soxrInputPointers: UnsafeMutablePointer<UnsafePointer<Float>?>

    // MARK: Render thread only
    /// Frames of `outputBlock` not yet handed out, starting at `fifoStart`.
    var fifoStart = 0
    var fifoCount = 0
    /// libsoxr: frames of the input block served so far, and frames it holds.
    private var inputServed = 0
    private var inputHeld = 0
    /// The provider reported the end of its input.
    var inputEnded = false
    /// The engine has no more output (input ended and drained, or an error).
    var outputEnded = false
    /// Nothing has been converted since creation (or since the last ``reset()``): a reset has
    /// nothing to forget (libsoxr's `soxr_clear` would free and re-create its buffers).
    private var isFresh = true
    /// libsoxr: output frames of the silent pre-roll still to drop (see the type's documentation).
    private var preRollFrames = 0

    /// The largest rate ratio either way (output/input and input/output) a converter accepts; the
    /// graph-file checker reports larger ones before any node is made.
    package static let maximumConversionRatio = StreamFormat.maximumConversionRatio

    /// Throws what ``init(channelCount:inputSampleRate:outputSampleRate:quality:provider:)`` throws
    /// for these arguments before it allocates anything (the graph's resolve step asks this
    /// without building a resampler). Control thread; allocates nothing.
    package static func check(channelCount: Int, inputSampleRate: Double, outputSampleRate: Double) throws(ResamplerError) {
        guard channelCount > 0 else { throw .invalidChannelCount(channelCount) }
        let ratio = outputSampleRate / inputSampleRate
        guard inputSampleRate > 0, outputSampleRate > 0, ratio.isFinite, ratio >= 1.0 / Resampler.maximumConversionRatio,
              ratio <= Resampler.maximumConversionRatio else {
            throw .unsupportedRatio(inputSampleRate: inputSampleRate, outputSampleRate: outputSampleRate)
        }
    }

    /// Creates a converter for `channelCount` channels from `inputSampleRate` to
    /// `outputSampleRate` with `quality`, pulling input through `provider`. Allocates (control
    /// thread).
    package init(channelCount: Int, inputSampleRate: Double, outputSampleRate: Double,
                quality: Quality = .best, provider: @escaping InputProvider) throws(ResamplerError) {
        try Self.check(channelCount: channelCount, inputSampleRate: inputSampleRate, outputSampleRate: outputSampleRate)
        let library: LazyLibrary = quality.usesSoxr ? .soxr : .samplerate
        if let reason = library.loadFailure { throw .libraryMissing(library: library.name, reason: reason) }
        let ratio = outputSampleRate / inputSampleRate
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
        outputBlock = .allocate(capacity: block * channelCount)
        outputBlock.initialize(repeating: 0, count: block * channelCount)
        soxrInputPointers = .allocate(capacity: channelCount)
        soxrInputPointers.initialize(repeating: nil, count: channelCount)

        // Every other stored property is set, so self can be the callbacks' context (unretained:
        // the state is deleted in deinit, before self goes away).
        let context = Unmanaged.passUnretained(self).toOpaque()
        if quality.usesSoxr {
            let s = try Self.makeSoxr(inputSampleRate: inputSampleRate, outputSampleRate: outputSampleRate,
                                      channelCount: channelCount)
            soxr = s
            preRollFrames = try Self.primeSoxr(s, inputSampleRate: inputSampleRate, outputSampleRate: outputSampleRate,
                                               channelCount: channelCount)
            if let error = soxr_set_input_fn(s, Self.soxrCallback, context, block) {
                throw .libsoxr(message: String(cString: error))
            }
        } else {
            var error: Int32 = 0
            guard let s = src_callback_new(Self.callback, quality.converterType, Int32(channelCount), &error, context) else {
                throw .libsamplerate(code: error, message: String(cString: src_strerror(error)))
            }
            state = s
        }
    }

    deinit {
        if let state { src_delete(state) }
        if let soxr { soxr_delete(soxr) }
        inputStorage.deallocate()
        inputChannels.deallocate()
        inputInterleaved.deallocate()
        outputBlock.deallocate()
        soxrInputPointers.deallocate()
    }

    // MARK: libsoxr

    /// The end of libsoxr's flat passband, as a fraction of the lower Nyquist rate.
    static let soxrPassbandEnd = 0.97

    /// A libsoxr stream resampler: very high quality (28-bit), steep filter (a wider passband
    /// than plain VHQ; see Docs/Nodes.md for the measured figures), linear phase, split float
    /// input and interleaved float output, one thread (no OpenMP on the render thread).
    private static func makeSoxr(inputSampleRate: Double, outputSampleRate: Double, channelCount: Int) throws(ResamplerError) -> soxr_t {
        var io = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_I)
        var q = soxr_quality_spec(UInt(SOXR_28_BITQ), UInt(SOXR_LINEAR_PHASE | SOXR_STEEP_FILTER))
        // Flat to 97% of the lower Nyquist rate (within libsoxr's 0.01 dB roll-off allowance)
        // and no aliasing above it: a wider passband than libsamplerate's SINC_BEST (whose
        // -3 dB point is at 0.961 of Nyquist, measured), at a fraction of its cost.
        q.passband_end = soxrPassbandEnd
        q.stopband_begin = 1
        var runtime = soxr_runtime_spec(1)
        var error: soxr_error_t?
        guard let s = soxr_create(inputSampleRate, outputSampleRate, UInt32(channelCount), &error, &io, &q, &runtime),
              error == nil else {
            throw .libsoxr(message: error.map { String(cString: $0) } ?? "soxr_create failed")
        }
        return s
    }

    /// Converts a silent pre-roll through `s` (control thread: allocates) so that libsoxr has
    /// set itself up and grown its buffers; returns the output frames of the pre-roll that `s`
    /// will still produce (to be dropped). 0 when the rates are not primed.
    private static func primeSoxr(_ s: soxr_t, inputSampleRate: Double, outputSampleRate: Double,
                                  channelCount: Int) throws(ResamplerError) -> Int {
        guard inputSampleRate == inputSampleRate.rounded(), outputSampleRate == outputSampleRate.rounded(),
              inputSampleRate < 1e9, outputSampleRate < 1e9 else { return 0 }
        let inRate = Int(inputSampleRate), outRate = Int(outputSampleRate)
        var a = inRate, b = outRate
        while b != 0 { (a, b) = (b, a % b) }
        let period = inRate / a
        guard period <= 1 << 20 else { return 0 }
        let z = (32_768 + period - 1) / period * period
        let q = z / period * (outRate / a)
        let zeros = UnsafeMutablePointer<Float>.allocate(capacity: z)
        zeros.initialize(repeating: 0, count: z)
        let channels = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: channelCount)
        channels.initialize(repeating: UnsafePointer(zeros), count: channelCount)
        let outputCapacity = q + 4096
        let output = UnsafeMutablePointer<Float>.allocate(capacity: outputCapacity * channelCount)
        defer {
            zeros.deallocate()
            channels.deallocate()
            output.deallocate()
        }
        var inputDone = 0, outputDone = 0
        if let error = soxr_process(s, channels, z, &inputDone, output, outputCapacity, &outputDone) {
            throw .libsoxr(message: String(cString: error))
        }
        guard inputDone == z, outputDone <= q else {
            throw .libsoxr(message: "priming took \(inputDone) of \(z) input frames and gave \(outputDone) output frames (at most \(q))")
        }
        return q - outputDone
    }

    /// libsoxr's input function: serves (part of) the current input block, pulling the next
    /// block from the provider when it is used up.
    private static let soxrCallback: soxr_input_fn_t = { context, data, requested in
        guard let context, let data else { return 0 }
        let me = Unmanaged<Resampler>.fromOpaque(context).takeUnretainedValue()
        return me.serveSoxr(data, requested)
    }

    @inline(__always)
    private func serveSoxr(_ data: UnsafeMutablePointer<soxr_in_t?>, _ requested: Int) -> Int {
        data.pointee = UnsafeRawPointer(soxrInputPointers)
        if inputServed == inputHeld {
            if inputEnded { return 0 }
            let block = Self.blockFrames
            let got = min(max(provider(UnsafeBufferPointer(start: inputChannels, count: channelCount), block), 0), block)
            if got < block { inputEnded = true }
            inputServed = 0
            inputHeld = got
            if got == 0 { return 0 }
        }
        let n = min(requested, inputHeld - inputServed)
        for c in 0..<channelCount { soxrInputPointers[c] = UnsafePointer(inputChannels[c] + inputServed) }
        inputServed += n
        return n
    }

    // MARK: libsamplerate

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

    // MARK: Conversion

    /// Writes exactly `frameCount` frames into each output channel (`output.count` must equal
    /// ``channelCount``), pulling input as needed. Returns the frames of real output; after the
    /// input has ended and drained, the rest is zero-filled. Real-time safe.
    @discardableResult
    package func read(into output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int {
        let n = channelCount
        let block = Self.blockFrames
        var produced = 0
        isFresh = false
        while produced < frameCount {
            if fifoCount == 0 {
                if outputEnded { break }
                if preRollFrames > 0 {
                    // The primed engine's silent pre-roll: produced and dropped (fixed sizes: deterministic).
                    let got = soxr_output(soxr, outputBlock, min(block, preRollFrames))
                    if got <= 0 { outputEnded = true; break }
                    preRollFrames -= got
                    continue
                }
                let got = soxr != nil ? soxr_output(soxr, outputBlock, block)
                                      : Int(src_callback_read(state, ratio, block, outputBlock))
                if got <= 0 { outputEnded = true; break }
                fifoStart = 0
                fifoCount = got
            }
            let m = min(fifoCount, frameCount - produced)
            let base = outputBlock + fifoStart * n
            for c in 0..<min(n, output.count) {
                let dst = output[c] + produced
                let src = base + c
                // Wrapping `&*`: no overflow trap per sample (the index stays within the block).
                for i in 0..<m { dst[i] = src[i &* n] }
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

    /// Forgets all history (filter state, FIFO, end of input), as at creation. Real-time safe
    /// for libsamplerate, and for libsoxr while nothing has been converted since creation (an
    /// input adapter starting: nothing to do); resetting a libsoxr converter that has run makes
    /// it rebuild its buffers (`soxr_clear`, not primed again), which allocates.
    package func reset() {
        if isFresh { return }
        if let soxr {
            soxr_clear(soxr)
            soxr_set_input_fn(soxr, Self.soxrCallback, Unmanaged.passUnretained(self).toOpaque(), Self.blockFrames)
        } else {
            src_reset(state)
        }
        fifoStart = 0
        fifoCount = 0
        inputServed = 0
        inputHeld = 0
        inputEnded = false
        outputEnded = false
        isFresh = true
    }
}

extension ConverterQuality {
    /// Whether libsoxr converts at this quality (otherwise libsamplerate).
    var usesSoxr: Bool { self == .best }

    /// libsamplerate's converter type of this quality (`best`: unused, libsoxr converts).
    var converterType: Int32 {
        switch self {
        case .best, .sincBest: return Int32(SRC_SINC_BEST_QUALITY)
        case .medium: return Int32(SRC_SINC_MEDIUM_QUALITY)
        case .fastest: return Int32(SRC_SINC_FASTEST)
        case .linear: return Int32(SRC_LINEAR)
        case .zeroOrderHold: return Int32(SRC_ZERO_ORDER_HOLD)
        }
    }
}
