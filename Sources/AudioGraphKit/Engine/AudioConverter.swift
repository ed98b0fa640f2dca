// AVAudioConverter without the prefix, for linear PCM: sample type, layout, channels and sample rate.
import CSampleRate
import CSoxr
import Foundation

/// Converts linear PCM between two ``AudioFormat``s, as `AVAudioConverter` does for PCM: sample
/// type (Float32, Float64, Int16, Int32), interleaving, channel count (``channelMap``,
/// ``downmix``) and, through ``convert(to:error:withInputFrom:)``, sample rate.
///
/// Two ways to convert, as on Apple's platforms:
/// - ``convert(to:from:)`` converts one buffer into another of the same rate (it throws, as
///   Apple's does with `kAudio_ParamError` (-50), when the rates differ or the output is too
///   small). It keeps no state.
/// - ``convert(to:error:withInputFrom:)`` fills the output buffer, calling the input block for
///   input as it needs it; it converts the sample rate too and carries state from one call to
///   the next (a stream), until ``reset()``.
///
/// Sample types: integers map to [-1, 1) by 2^15 or 2^31 (`Int16(-32768)` is -1.0); floats to
/// integers are scaled, rounded to nearest (ties to even, as `lrint`) and clipped. With ``dither`` on, Int16 output gets
/// triangular (TPDF) dither of ±1 LSB before rounding. Internally samples are `Double`, so
/// Int32 and Float32 pass through a format change exactly.
///
/// Channels: output channel *i* takes input channel `channelMap[i]` (-1: silence). The default
/// map takes the first channels, copies a mono input into every output channel and leaves
/// other extra output channels silent. With ``downmix`` on and fewer output than input
/// channels (and the default map), the channels are mixed instead, by the Web Audio "speakers"
/// rules the engine's mixers use (stereo to mono: (L + R) / 2; 5.1 to stereo with the centre
/// and surrounds at 1/√2; other counts take the channels that fit).
///
/// Sample rate (``convert(to:error:withInputFrom:)`` only), by ``sampleRateConverterQuality``
/// and ``sampleRateConverterAlgorithm``:
///
/// | quality / algorithm | library and converter |
/// | --- | --- |
/// | `.max` | libsoxr, very high quality (`SOXR_VHQ`, 28-bit, linear phase) |
/// | `.high` (the default) | libsoxr, high quality (`SOXR_HQ`, 20-bit, linear phase; sox's default `rate`) |
/// | `.medium` | libsamplerate `SRC_SINC_MEDIUM_QUALITY` |
/// | `.low` | libsamplerate `SRC_SINC_FASTEST` |
/// | `.min` | libsamplerate `SRC_LINEAR` (its output lags by one input frame: it interpolates from the previous frame) |
/// | `AVSampleRateConverterAlgorithm_Mastering` | libsoxr `SOXR_VHQ`, whatever the quality |
/// | `AVSampleRateConverterAlgorithm_MinimumPhase` | libsoxr minimum phase (`SOXR_VHQ` at `.max`, else `SOXR_HQ`) |
///
/// Quality and algorithm are read when a stream starts (the first conversion, or the first
/// after ``reset()``).
///
/// Streaming: input goes to the sample-rate converter in fixed blocks of 1024 frames (the
/// last, partial one at the end of the stream), so the output does not depend on how the input
/// block slices its input or how large the output buffers are: any slicing gives the one-shot
/// result, sample for sample. A block that runs dry (`.noDataNow`) leaves up to 1023 frames
/// pending until more input comes or the stream ends.
///
/// Priming (``primeMethod``, ``primeInfo``): `.normal` (the default) is time-aligned (output
/// frame *k* is the input at time *k* / ratio, the filter's tail drained at the end);
/// `.none` delays the output by ``primeInfo``'s `leadingFrames` input frames (silence first,
/// the converter's latency); `.pre` drops the output of the first `leadingFrames` input frames
/// (the caller supplies that much history before the frames it wants). ``primeInfo`` starts as
/// the converter's start-up latency in input frames (measured: the input the library takes
/// before its first output; 0 without rate conversion) and can be set.
///
/// Where Linux differs: PCM only (no codecs: `bitRate`, `magicCookie` and the encoder
/// properties are absent; files are encoded by ``AudioFile``); the output buffer is an
/// ``AudioPCMBuffer`` (there is no `AVAudioBuffer` base class: ``AudioBuffer`` is CoreAudio's
/// struct); Apple's algorithm names are the string constants above.
///
/// Thread safety: not synchronized, as AVAudioConverter: use one converter from one thread at a
/// time (a tap block, a queue). It allocates while converting (its FIFO grows to what a call
/// needs), so it belongs on a tap block's or another non-real-time thread, never in a render
/// block. The input block runs synchronously on the thread that called `convert`.
public final class AudioConverter: @unchecked Sendable {
    // MARK: Immutable after init
    /// The format of the input buffers.
    public let inputFormat: AudioFormat
    /// The format of the output buffers.
    public let outputFormat: AudioFormat

    // MARK: Owner thread (settings)
    /// Output channel i takes input channel `channelMap[i]`; -1 is silence. As many entries as
    /// output channels (setting another count, or an input channel that does not exist, stops
    /// the program, as Apple raises an exception).
    public var channelMap: [NSNumber] {
        didSet {
            guard channelMap.count == Int(outputFormat.channelCount),
                  channelMap.allSatisfy({ $0.intValue >= -1 && $0.intValue < Int(inputFormat.channelCount) }) else {
                fatalError("AudioConverter.channelMap: \(channelMap.map(\.intValue)) is not a map of \(outputFormat.channelCount) "
                           + "output channel(s) onto \(inputFormat.channelCount) input channel(s) (-1: silence)")
            }
            channelMapIsDefault = channelMap.map(\.intValue) == Self.defaultChannelMap(input: inputFormat, output: outputFormat)
        }
    }
    /// Mix the input channels down when there are fewer output channels (default false: the
    /// channel map drops the extra ones).
    public var downmix = false
    /// Dither Int16 output (TPDF, ±1 LSB) rather than only rounding (default false).
    public var dither = false
    /// The sample-rate converter's quality, an ``AudioQuality`` raw value (default `.high`).
    public var sampleRateConverterQuality: Int = AudioQuality.high.rawValue
    /// The sample-rate converter's algorithm (`AVSampleRateConverterAlgorithm_Normal` by default).
    public var sampleRateConverterAlgorithm: String? = AVSampleRateConverterAlgorithm_Normal
    /// How the start-up latency of a rate conversion is handled (default `.normal`).
    public var primeMethod: AudioConverterPrimeMethod = .normal
    /// The priming frames: the converter's start-up latency until set.
    public var primeInfo: AudioConverterPrimeInfo {
        get {
            if let customPrimeInfo { return customPrimeInfo }
            guard needsRateConversion else { return AudioConverterPrimeInfo() }
            let frames = UInt32(probeLatency())
            return AudioConverterPrimeInfo(leadingFrames: frames, trailingFrames: frames)
        }
        set { customPrimeInfo = newValue }
    }

    // MARK: Owner thread (stream state)
    private var channelMapIsDefault = true
    private var customPrimeInfo: AudioConverterPrimeInfo?
    private var cachedLatency: (engine: AudioConverterResampler.Engine, frames: Int)?
    private var resampler: AudioConverterResampler?
    /// Converted output frames (interleaved, output channels, `Double`) not yet handed out.
    private var fifo: [Double] = []
    private var fifoStart = 0
    private var streamStarted = false
    private var inputEnded = false
    /// Output frames still to drop (`.pre`).
    private var framesToDrop = 0
    private var ditherSeed: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// Scratch: input frames as `Double`, then mixed to the output channels.
    private var inputScratch: [Double] = []
    private var mixedScratch: [Double] = []

    private var needsRateConversion: Bool { inputFormat.sampleRate != outputFormat.sampleRate }

    /// A converter from `fromFormat` to `toFormat`; nil when either is not a PCM common format
    /// (packed 24-bit) or the rates are more than 256:1 apart.
    public init?(from fromFormat: AudioFormat, to toFormat: AudioFormat) {
        guard fromFormat.commonFormat != .otherFormat, toFormat.commonFormat != .otherFormat else { return nil }
        let ratio = toFormat.sampleRate / fromFormat.sampleRate
        guard ratio >= 1.0 / 256, ratio <= 256 else { return nil }
        inputFormat = fromFormat
        outputFormat = toFormat
        channelMap = Self.defaultChannelMap(input: fromFormat, output: toFormat).map { NSNumber(value: $0) }
    }

    /// The map Apple's converter starts with: the first channels, a mono input copied to every
    /// output channel, other extra output channels silent.
    static func defaultChannelMap(input: AudioFormat, output: AudioFormat) -> [Int] {
        let inCount = Int(input.channelCount)
        return (0..<Int(output.channelCount)).map { i in i < inCount ? i : (inCount == 1 ? 0 : -1) }
    }

    /// Ends the stream: forgets pending input and output and the sample-rate converter's history.
    /// The next ``convert(to:error:withInputFrom:)`` starts a new stream with the current settings.
    public func reset() {
        resampler = nil
        fifo.removeAll(keepingCapacity: true)
        fifoStart = 0
        streamStarted = false
        inputEnded = false
        framesToDrop = 0
        ditherSeed = 0x9E37_79B9_7F4A_7C15
    }

    // MARK: Converting one buffer

    /// Converts `inputBuffer`'s valid frames into `outputBuffer` (sample type, layout, channels;
    /// not the sample rate) and sets its `frameLength`. Throws an `NSError` in
    /// `NSOSStatusErrorDomain` with code -50 (`kAudio_ParamError`, as Apple's) when a buffer's
    /// format is not the converter's, the rates differ, or `outputBuffer` cannot hold the
    /// frames.
    public func convert(to outputBuffer: AudioPCMBuffer, from inputBuffer: AudioPCMBuffer) throws {
        guard inputBuffer.format == inputFormat else {
            throw Self.paramError("convert(to:from:): the input buffer's format \(inputBuffer.format) is not the converter's input format \(inputFormat)")
        }
        guard outputBuffer.format == outputFormat else {
            throw Self.paramError("convert(to:from:): the output buffer's format \(outputBuffer.format) is not the converter's output format \(outputFormat)")
        }
        guard !needsRateConversion else {
            throw Self.paramError("convert(to:from:) cannot convert the sample rate (\(ParameterInfo.format(inputFormat.sampleRate)) Hz to "
                                  + "\(ParameterInfo.format(outputFormat.sampleRate)) Hz); use convert(to:error:withInputFrom:)")
        }
        guard outputBuffer.frameCapacity >= inputBuffer.frameLength else {
            throw Self.paramError("convert(to:from:): the output buffer holds \(outputBuffer.frameCapacity) frames, the input has \(inputBuffer.frameLength)")
        }
        let total = Int(inputBuffer.frameLength)
        let matrix = mixMatrix()
        var done = 0
        while done < total {
            let n = min(4096, total - done)
            read(inputBuffer, from: done, count: n)
            mix(matrix, frames: n)
            mixedScratch.withUnsafeBufferPointer { write($0.baseAddress!, frames: n, to: outputBuffer, at: done) }
            done += n
        }
        outputBuffer.frameLength = AudioFrameCount(total)
    }

    // MARK: Converting a stream

    /// Fills `outputBuffer` to its capacity with converted input, calling `inputBlock` for input
    /// as needed (possibly several times, possibly not at all when earlier input suffices), and
    /// sets its `frameLength`. Returns `.haveData` when the buffer is full (or holds the last
    /// frames of the stream), `.inputRanDry` when the block returned `.noDataNow` first,
    /// `.endOfStream` when the stream has ended and no frame was returned, `.error` (with
    /// `outError` set to an `NSError` with code -50) for a buffer in the wrong format.
    public func convert(to outputBuffer: AudioPCMBuffer, error outError: NSErrorPointer,
                        withInputFrom inputBlock: AudioConverterInputBlock) -> AudioConverterOutputStatus {
        guard outputBuffer.format == outputFormat else {
            outError?.pointee = Self.paramError("convert(to:error:withInputFrom:): the output buffer's format \(outputBuffer.format) is not the converter's output format \(outputFormat)")
            return .error
        }
        let capacity = Int(outputBuffer.frameCapacity)
        var written = 0
        var emptyAnswers = 0
        let matrix = mixMatrix()
        do {
            if !streamStarted { try startStream() }
            while true {
                written += deliver(to: outputBuffer, at: written, count: capacity - written)
                if written == capacity { break }
                if inputEnded {
                    outputBuffer.frameLength = AudioFrameCount(written)
                    return written > 0 ? .haveData : .endOfStream
                }
                let ratio = outputFormat.sampleRate / inputFormat.sampleRate
                let wanted = AudioPacketCount(min(Double(UInt32.max), (Double(capacity - written) / ratio).rounded(.up)))
                var status = AudioConverterInputStatus.noDataNow
                let supplied = inputBlock(max(1, wanted), &status)
                switch status {
                case .haveData:
                    guard let buffer = supplied else {
                        throw Self.paramError("convert(to:error:withInputFrom:): the input block reported .haveData and returned nil")
                    }
                    guard buffer.format == inputFormat else {
                        throw Self.paramError("convert(to:error:withInputFrom:): the input block returned a buffer of format \(buffer.format), "
                                              + "not the converter's input format \(inputFormat)")
                    }
                    if buffer.frameLength == 0 {
                        emptyAnswers += 1
                        if emptyAnswers > 64 {
                            outputBuffer.frameLength = AudioFrameCount(written)
                            return .inputRanDry
                        }
                    } else {
                        emptyAnswers = 0
                    }
                    try consume(buffer, matrix: matrix)
                case .noDataNow:
                    outputBuffer.frameLength = AudioFrameCount(written)
                    return .inputRanDry
                case .endOfStream:
                    inputEnded = true
                    if let resampler {
                        var tail: [Double] = []
                        try resampler.drain(into: &tail)
                        appendOutput(tail)
                    }
                }
            }
        } catch {
            outError?.pointee = error as NSError
            outputBuffer.frameLength = AudioFrameCount(written)
            return .error
        }
        outputBuffer.frameLength = AudioFrameCount(written)
        return .haveData
    }

    /// Sets up a stream: the sample-rate converter with the current settings and the priming.
    private func startStream() throws {
        streamStarted = true
        let prime = primeInfo
        let ratio = outputFormat.sampleRate / inputFormat.sampleRate
        let primeOutputFrames = Int((Double(prime.leadingFrames) * ratio).rounded())
        if needsRateConversion {
            do {
                resampler = try AudioConverterResampler(channelCount: Int(outputFormat.channelCount), inputRate: inputFormat.sampleRate,
                                                        outputRate: outputFormat.sampleRate, engine: engine())
            } catch {
                throw Self.paramError("cannot convert \(ParameterInfo.format(inputFormat.sampleRate)) Hz to "
                                      + "\(ParameterInfo.format(outputFormat.sampleRate)) Hz: \(error)")
            }
        }
        switch primeMethod {
        case .normal: break
        case .pre: framesToDrop = primeOutputFrames
        case .none: appendOutput([Double](repeating: 0, count: primeOutputFrames * Int(outputFormat.channelCount)))
        }
    }

    /// The library and converter the current quality and algorithm choose (see the type's table).
    func engine() -> AudioConverterResampler.Engine {
        let quality = sampleRateConverterQuality
        switch sampleRateConverterAlgorithm {
        case AVSampleRateConverterAlgorithm_Mastering?:
            return .soxr(recipe: UInt(SOXR_28_BITQ), flags: 0)
        case AVSampleRateConverterAlgorithm_MinimumPhase?:
            return .soxr(recipe: UInt(quality >= AudioQuality.max.rawValue ? SOXR_28_BITQ : SOXR_20_BITQ), flags: UInt(SOXR_MINIMUM_PHASE))
        default:
            if quality >= AudioQuality.max.rawValue { return .soxr(recipe: UInt(SOXR_28_BITQ), flags: 0) }
            if quality >= AudioQuality.high.rawValue { return .soxr(recipe: UInt(SOXR_20_BITQ), flags: 0) }
            if quality >= AudioQuality.medium.rawValue { return .libsamplerate(converterType: Int32(SRC_SINC_MEDIUM_QUALITY)) }
            if quality >= AudioQuality.low.rawValue { return .libsamplerate(converterType: Int32(SRC_SINC_FASTEST)) }
            return .libsamplerate(converterType: Int32(SRC_LINEAR))
        }
    }

    /// The start-up latency in input frames of the converter the settings choose (measured once per choice).
    private func probeLatency() -> Int {
        let choice = engine()
        if let cachedLatency, cachedLatency.engine == choice { return cachedLatency.frames }
        let frames = (try? AudioConverterResampler(channelCount: 1, inputRate: inputFormat.sampleRate, outputRate: outputFormat.sampleRate,
                                                   engine: choice))?.latencyInputFrames ?? 0
        cachedLatency = (choice, frames)
        return frames
    }

    /// Reads, mixes and (when rates differ) resamples `buffer`'s frames into the FIFO.
    private func consume(_ buffer: AudioPCMBuffer, matrix: [[Double]]) throws {
        let total = Int(buffer.frameLength)
        var done = 0
        while done < total {
            let n = min(4096, total - done)
            read(buffer, from: done, count: n)
            mix(matrix, frames: n)
            if let resampler {
                var out: [Double] = []
                do {
                    try mixedScratch.withUnsafeBufferPointer { p throws(AudioConverterResamplerError) in
                        try resampler.push(p.baseAddress!, frames: n, into: &out)
                    }
                } catch {
                    throw Self.paramError("sample-rate conversion failed: \(error)")
                }
                appendOutput(out)
            } else {
                appendOutput(Array(mixedScratch[0..<(n * Int(outputFormat.channelCount))]))
            }
            done += n
        }
    }

    /// Appends converted frames to the FIFO, after dropping what `.pre` priming drops.
    private func appendOutput(_ samples: [Double]) {
        let channels = Int(outputFormat.channelCount)
        var frames = samples.count / channels
        var start = 0
        if framesToDrop > 0 {
            let d = min(framesToDrop, frames)
            framesToDrop -= d
            frames -= d
            start = d * channels
        }
        guard frames > 0 else { return }
        if fifoStart > 0 && fifoStart * 2 >= fifo.count {
            fifo.removeFirst(fifoStart * channels)
            fifoStart = 0
        }
        fifo.append(contentsOf: samples[start...])
    }

    /// Moves up to `count` frames from the FIFO into `buffer` at frame `offset`; returns how many.
    private func deliver(to buffer: AudioPCMBuffer, at offset: Int, count: Int) -> Int {
        let channels = Int(outputFormat.channelCount)
        let available = fifo.count / channels - fifoStart
        let n = min(available, count)
        guard n > 0 else { return 0 }
        fifo.withUnsafeBufferPointer { p in write(p.baseAddress! + fifoStart * channels, frames: n, to: buffer, at: offset) }
        fifoStart += n
        if fifoStart * channels == fifo.count {
            fifo.removeAll(keepingCapacity: true)
            fifoStart = 0
        }
        return n
    }

    // MARK: Samples

    /// The output-by-input mixing matrix the channel map (or the down-mix) describes.
    func mixMatrix() -> [[Double]] {
        let inCount = Int(inputFormat.channelCount)
        let outCount = Int(outputFormat.channelCount)
        if downmix && outCount < inCount && channelMapIsDefault {
            // The engine's own up/down-mix rules, read off as coefficients (the mix is linear).
            var matrix = [[Double]](repeating: [Double](repeating: 0, count: inCount), count: outCount)
            let input = ChannelBufferStorage(channelCount: inCount, capacity: 1)
            let output = ChannelBufferStorage(channelCount: outCount, capacity: 1)
            let inPointers = (0..<inCount).map { UnsafePointer(input.list.channel($0)) }
            let outPointers = (0..<outCount).map { output.list.channel($0) }
            for j in 0..<inCount {
                for c in 0..<inCount { input.list.channel(c)[0] = c == j ? 1 : 0 }
                inPointers.withUnsafeBufferPointer { ip in
                    outPointers.withUnsafeBufferPointer { op in
                        ChannelMixing.mix(input: ip, output: op, frameCount: 1)
                    }
                }
                for i in 0..<outCount { matrix[i][j] = Double(output.list.channel(i)[0]) }
            }
            return matrix
        }
        return channelMap.map { entry in
            (0..<inCount).map { $0 == entry.intValue ? 1.0 : 0.0 }
        }
    }

    /// `count` frames of `buffer` from frame `start`, as interleaved `Double`s in `inputScratch`.
    private func read(_ buffer: AudioPCMBuffer, from start: Int, count: Int) {
        let channels = Int(inputFormat.channelCount)
        if inputScratch.count < count * channels { inputScratch = [Double](repeating: 0, count: count * channels) }
        let interleaved = inputFormat.isInterleaved
        inputScratch.withUnsafeMutableBufferPointer { out in
            for c in 0..<channels {
                let base = buffer.bufferData(interleaved ? 0 : c)
                let step = interleaved ? channels : 1
                let first = start * step + (interleaved ? c : 0)
                switch inputFormat.commonFormat {
                case .pcmFormatFloat32:
                    let p = base.assumingMemoryBound(to: Float.self)
                    for f in 0..<count { out[f * channels + c] = Double(p[first + f * step]) }
                case .pcmFormatFloat64:
                    let p = base.assumingMemoryBound(to: Double.self)
                    for f in 0..<count { out[f * channels + c] = p[first + f * step] }
                case .pcmFormatInt16:
                    let p = base.assumingMemoryBound(to: Int16.self)
                    for f in 0..<count { out[f * channels + c] = Double(p[first + f * step]) / 32768 }
                case .pcmFormatInt32:
                    let p = base.assumingMemoryBound(to: Int32.self)
                    for f in 0..<count { out[f * channels + c] = Double(p[first + f * step]) / 2_147_483_648 }
                case .otherFormat:
                    break
                }
            }
        }
    }

    /// Mixes `frames` frames of `inputScratch` into `mixedScratch` (interleaved, output channels).
    private func mix(_ matrix: [[Double]], frames: Int) {
        let inCount = Int(inputFormat.channelCount)
        let outCount = Int(outputFormat.channelCount)
        if mixedScratch.count < frames * outCount { mixedScratch = [Double](repeating: 0, count: frames * outCount) }
        inputScratch.withUnsafeBufferPointer { input in
            mixedScratch.withUnsafeMutableBufferPointer { out in
                for i in 0..<outCount {
                    let row = matrix[i]
                    let sources = row.indices.filter { row[$0] != 0 }
                    if sources.count == 1 && row[sources[0]] == 1 {
                        let j = sources[0]
                        for f in 0..<frames { out[f * outCount + i] = input[f * inCount + j] }
                    } else {
                        for f in 0..<frames {
                            var sum = 0.0
                            for j in sources { sum += row[j] * input[f * inCount + j] }
                            out[f * outCount + i] = sum
                        }
                    }
                }
            }
        }
    }

    /// Writes `frames` interleaved output-channel frames from `samples` into `buffer` at frame
    /// `offset`, in the output sample type.
    private func write(_ samples: UnsafePointer<Double>, frames: Int, to buffer: AudioPCMBuffer, at offset: Int) {
        let channels = Int(outputFormat.channelCount)
        let interleaved = outputFormat.isInterleaved
        let step = interleaved ? channels : 1
        for c in 0..<channels {
            let base = buffer.bufferData(interleaved ? 0 : c)
            let first = offset * step + (interleaved ? c : 0)
            switch outputFormat.commonFormat {
            case .pcmFormatFloat32:
                let p = base.assumingMemoryBound(to: Float.self)
                for f in 0..<frames { p[first + f * step] = Float(samples[f * channels + c]) }
            case .pcmFormatFloat64:
                let p = base.assumingMemoryBound(to: Double.self)
                for f in 0..<frames { p[first + f * step] = samples[f * channels + c] }
            case .pcmFormatInt16:
                // With dither, frame by frame across the channels (the pseudo-random sequence
                // then does not depend on how the output is sliced).
                guard !dither else { continue }
                let p = base.assumingMemoryBound(to: Int16.self)
                for f in 0..<frames {
                    let v = samples[f * channels + c] * 32768
                    p[first + f * step] = Int16(max(-32768, min(32767, v.rounded(.toNearestOrEven))))
                }
            case .pcmFormatInt32:
                let p = base.assumingMemoryBound(to: Int32.self)
                for f in 0..<frames {
                    let v = (samples[f * channels + c] * 2_147_483_648).rounded(.toNearestOrEven)
                    p[first + f * step] = Int32(max(-2_147_483_648, min(2_147_483_647, v)))
                }
            case .otherFormat:
                break
            }
        }
        if dither && outputFormat.commonFormat == .pcmFormatInt16 {
            for f in 0..<frames {
                for c in 0..<channels {
                    let p = buffer.bufferData(interleaved ? 0 : c).assumingMemoryBound(to: Int16.self)
                    let v = samples[f * channels + c] * 32768 + nextDither()
                    p[(offset + f) * step + (interleaved ? c : 0)] = Int16(max(-32768, min(32767, v.rounded(.toNearestOrEven))))
                }
            }
        }
    }

    /// Triangular dither in (-1, 1) LSB: the difference of two uniform values (xorshift64*).
    private func nextDither() -> Double {
        func uniform() -> Double {
            ditherSeed ^= ditherSeed >> 12
            ditherSeed ^= ditherSeed << 25
            ditherSeed ^= ditherSeed >> 27
            return Double((ditherSeed &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
        }
        return uniform() - uniform()
    }

    /// The error AVAudioConverter reports for bad arguments: `kAudio_ParamError` (-50).
    static func paramError(_ message: String) -> NSError {
        NSError(domain: NSOSStatusErrorDomain, code: -50, userInfo: [NSLocalizedDescriptionKey: "AudioConverter: \(message)"])
    }
}
