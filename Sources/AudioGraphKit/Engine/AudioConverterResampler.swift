// The push-model sample-rate converter behind AudioConverter: libsoxr or libsamplerate fed in fixed blocks.
import AudioGraphCore
import AudioGraphNodes
import CSampleRate
import CSoxr

/// Converts interleaved `Double` frames from one rate to another with libsoxr (qualities `.high`
/// and `.max`, or any quality with the minimum-phase or mastering algorithm) or libsamplerate (the
/// other qualities), pushing input as it comes (AVAudioConverter's input block may run dry at any
/// point, so the pull model of the graph's ``Resampler`` does not fit).
///
/// Determinism: input is fed to the library in blocks of exactly ``blockFrames`` frames (the
/// last, partial block only at the end of the stream), so the output does not depend on how the
/// caller sliced its input or its output: streaming in odd pieces gives the one-shot result,
/// sample for sample.
///
/// Latency: both libraries remove their filters' delay (output frame k is the input at time
/// k / ratio), which is AVAudioConverter's `.normal` prime method; ``latencyInputFrames`` reports the
/// start-up latency that `.none` puts back and `.pre` takes away.
///
/// Thread safety: not synchronized; one thread at a time (the converter's caller).
final class AudioConverterResampler {
    /// The library converting.
    enum Engine: Equatable {
        /// libsoxr with a quality recipe (`SOXR_HQ`, `SOXR_VHQ`) and phase flags.
        case soxr(recipe: UInt, flags: UInt)
        /// libsamplerate with a converter type (`SRC_SINC_MEDIUM_QUALITY`, ...).
        case libsamplerate(converterType: Int32)
    }

    /// Input frames handed to the library at a time.
    static let blockFrames = 1024

    let channelCount: Int
    let ratio: Double
    let engine: Engine
    private var soxr: soxr_t?
    private var src: OpaquePointer?
    /// Interleaved input waiting for a whole block.
    private var pending: [Double]
    private var pendingFrames = 0
    private var floatIn: [Float]
    private var floatOut: [Float]
    private var doubleOut: [Double]
    private let outputCapacity: Int
    /// Whether the end of the input was pushed and the tail drained.
    private(set) var isDrained = false

    init(channelCount: Int, inputRate: Double, outputRate: Double, engine: Engine) throws(AudioConverterResamplerError) {
        self.channelCount = channelCount
        ratio = outputRate / inputRate
        self.engine = engine
        pending = [Double](repeating: 0, count: Self.blockFrames * channelCount)
        outputCapacity = Int((Double(Self.blockFrames) * ratio).rounded(.up)) + 64
        floatIn = []
        floatOut = []
        doubleOut = [Double](repeating: 0, count: outputCapacity * channelCount)
        let library: LazyLibrary
        switch engine {
        case .soxr: library = .soxr
        case .libsamplerate: library = .samplerate
        }
        if let reason = library.loadFailure { throw .library("cannot load \(library.name): \(reason)") }
        switch engine {
        case .soxr(let recipe, let flags):
            var io = soxr_io_spec(SOXR_FLOAT64_I, SOXR_FLOAT64_I)
            var q = soxr_quality_spec(recipe, flags)
            var runtime = soxr_runtime_spec(1)
            var error: soxr_error_t?
            guard let s = soxr_create(inputRate, outputRate, UInt32(channelCount), &error, &io, &q, &runtime), error == nil else {
                throw .library(error.map { String(cString: $0) } ?? "soxr_create failed")
            }
            soxr = s
        case .libsamplerate(let type):
            var error: Int32 = 0
            guard let s = src_new(type, Int32(channelCount), &error) else {
                throw .library(String(cString: src_strerror(error)))
            }
            src = s
            floatIn = [Float](repeating: 0, count: Self.blockFrames * channelCount)
            floatOut = [Float](repeating: 0, count: outputCapacity * channelCount)
        }
    }

    deinit {
        if let soxr { soxr_delete(soxr) }
        if let src { src_delete(src) }
    }

    /// Input frames the library takes in before it gives its first output frame (its start-up
    /// latency: the filter's look-ahead plus its internal blocking), measured once on a probe
    /// converter fed silence 16 frames at a time. AudioConverter reports it as `primeInfo`.
    lazy var latencyInputFrames: Int = measureLatency()

    /// Forgets all input and output: the next frame starts a new stream.
    func reset() {
        if let soxr { soxr_clear(soxr) }
        if let src { src_reset(src) }
        pendingFrames = 0
        isDrained = false
    }

    /// Takes `frames` interleaved frames at `input`; appends the output produced to `output`.
    func push(_ input: UnsafePointer<Double>, frames: Int, into output: inout [Double]) throws(AudioConverterResamplerError) {
        var done = 0
        while done < frames {
            let n = min(frames - done, Self.blockFrames - pendingFrames)
            pending.withUnsafeMutableBufferPointer { p in
                (p.baseAddress! + pendingFrames * channelCount).update(from: input + done * channelCount, count: n * channelCount)
            }
            pendingFrames += n
            done += n
            if pendingFrames == Self.blockFrames {
                try process(frames: pendingFrames, end: false, into: &output)
                pendingFrames = 0
            }
        }
    }

    /// Ends the input: converts what is pending and drains the filter's tail into `output`.
    func drain(into output: inout [Double]) throws(AudioConverterResamplerError) {
        guard !isDrained else { return }
        if pendingFrames > 0 { try process(frames: pendingFrames, end: false, into: &output) }
        pendingFrames = 0
        try process(frames: 0, end: true, into: &output)
        isDrained = true
    }

    /// Runs the library over the first `frames` pending frames (all of them consumed), or over
    /// the end of input when `end`, until it gives no more output.
    private func process(frames: Int, end: Bool, into output: inout [Double]) throws(AudioConverterResamplerError) {
        let channels = channelCount
        if let soxr {
            var used = 0
            var guardCount = 0
            while true {
                var idone = 0
                var odone = 0
                let error: soxr_error_t? = pending.withUnsafeBufferPointer { inp in
                    doubleOut.withUnsafeMutableBufferPointer { outp in
                        if end {
                            return soxr_process(soxr, nil, 0, &idone, outp.baseAddress, outputCapacity, &odone)
                        }
                        return soxr_process(soxr, inp.baseAddress! + used * channels, frames - used, &idone,
                                            outp.baseAddress, outputCapacity, &odone)
                    }
                }
                if let error { throw .library(String(cString: error)) }
                used += idone
                output.append(contentsOf: doubleOut[0..<(odone * channels)])
                guardCount += 1
                if end ? odone == 0 : (used == frames && odone < outputCapacity) { break }
                if guardCount > 1_000_000 { throw .library("libsoxr made no progress") }
            }
        } else if let src {
            for i in 0..<(frames * channels) { floatIn[i] = Float(pending[i]) }
            var used = 0
            var guardCount = 0
            while true {
                var data = SRC_DATA()
                let result: Int32 = floatIn.withUnsafeBufferPointer { inp in
                    floatOut.withUnsafeMutableBufferPointer { outp in
                        data.data_in = inp.baseAddress! + used * channels
                        data.input_frames = end ? 0 : frames - used
                        data.data_out = outp.baseAddress
                        data.output_frames = outputCapacity
                        data.end_of_input = end ? 1 : 0
                        data.src_ratio = ratio
                        return src_process(src, &data)
                    }
                }
                if result != 0 { throw .library(String(cString: src_strerror(result))) }
                used += data.input_frames_used
                let produced = data.output_frames_gen
                output.reserveCapacity(output.count + produced * channels)
                for i in 0..<(produced * channels) { output.append(Double(floatOut[i])) }
                guardCount += 1
                if end ? produced == 0 : (used == frames && produced < outputCapacity) { break }
                if guardCount > 1_000_000 { throw .library("libsamplerate made no progress") }
            }
        }
    }

    private func measureLatency() -> Int {
        guard let probe = try? AudioConverterResampler(channelCount: 1, inputRate: 1, outputRate: ratio, engine: engine) else {
            return 0
        }
        var out: [Double] = []
        var fed = 0
        for i in 0..<16 { probe.pending[i] = 0 }
        while out.isEmpty && fed < 1 << 17 {
            try? probe.process(frames: 16, end: false, into: &out)
            fed += 16
        }
        return fed
    }
}

/// What the sample-rate converter's library reported.
enum AudioConverterResamplerError: Error, CustomStringConvertible {
    case library(String)

    var description: String {
        switch self {
        case .library(let message): return message
        }
    }
}
