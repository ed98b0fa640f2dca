// Zero-latency convolution: a direct-form head and non-uniformly partitioned FFT levels (FFTW), block-aligned.
import CFFTW
import CVectorKernels

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Convolves up to a few input channels with impulse responses into output channels, with no
/// added latency: `y_o[n] = Σ over paths (i → o, h) of Σ_j h[j] · x_i[n - j]`.
///
/// **How.** The first ``headLength`` (64) taps of each response run in direct form, eight
/// output frames at a time (each frame's 64-term sum in one SIMD lane, taps in order). The rest
/// is split into FFT levels with block sizes 64, 1024 and 16384: the level with block `N` covers
/// taps from `N` to the next level's block (15 partitions), the last level everything from its
/// `N` on. Each level is a uniformly partitioned overlap-save convolution (FFTs of `2N` points,
/// a frequency-domain delay line of its partitions) computed when an input block of `N` frames
/// is complete and played during the next `N` frames — which is exactly in time, because the
/// level's taps start `N` frames late. Spectra from all paths into one output are summed (32
/// bins at a time through every partition, the sums kept in registers) before the one inverse
/// transform; each input channel is transformed once per level. Blocks are aligned to frames
/// counted from ``reset()``, so the output is bit-identical whatever the call sizes.
///
/// **Speed.** The two inner loops (the head and the spectra's sum of products) are C
/// (`CVectorKernels`), with an AVX2 clone picked when the program loads (Swift code is compiled
/// for the x86-64 baseline) and no fused multiply-adds, so every machine computes the same bits.
/// The largest level's spectra (about 4 MB for a 3 s stereo response) come from memory: its
/// bytes per frame (paths × partitions × 16) argue for a large top block, the FFT's cost for a
/// smaller one; a top block of 16384 measured as fast as 8192 with fewer bytes (a 32768-point
/// `FFTW_ESTIMATE` transform costs 3.2 ns per frame against 1.9 for 16384 and 1.0 for 2048 on the
/// CI VM). For the 3 s stereo response the whole `audiograph render` of 60 s takes about 0.19 s
/// of CPU, ffmpeg's `afir` about 0.21 s (`make bench`).
///
/// **Cost**: per frame and path 64 multiply-adds plus, per level, its partition count of
/// complex multiply-adds per bin per block, and (stereo) four real transforms of `2N` points per
/// block; at a multiple of 16384 frames every level computes in the same call (the call that
/// crosses it does the most work).
///
/// Thread safety: `init` and `deinit` on a control thread (they allocate and plan FFTs);
/// ``process(inputs:outputs:frameCount:)`` and ``reset()`` on one render thread at a time,
/// real-time safe (no allocation, no lock; FFTW's execute functions are thread-safe).
final class PartitionedConvolver {
    /// Taps convolved in direct form.
    static let headLength = 64
    /// The FFT levels' block sizes.
    static let levelBlocks = [64, 1024, 16384]

    /// One convolution path.
    struct Path {
        var input: Int
        var output: Int
        var response: [Float]
    }

    /// One FFT level: block N, taps [start, start + partitions·N).
    private final class Level {
        let block: Int
        let partitions: Int
        /// Floats per split real or imaginary array (N + 1 bins rounded up to 8).
        let stride: Int
        let forwardPlan: OpaquePointer
        let inversePlan: OpaquePointer
        let time: UnsafeMutablePointer<Float>          // 2N, FFT input / inverse output
        let spectrum: UnsafeMutablePointer<Float>      // 2(N + 1) interleaved
        /// Per input channel: `partitions` spectra (re then im, `stride` each).
        let delayLine: UnsafeMutablePointer<Float>
        /// Per path: `partitions` filter spectra (re then im), scaled by 1/(2N).
        let filters: UnsafeMutablePointer<Float>
        let accumulator: UnsafeMutablePointer<Float>   // re then im
        /// Per output channel: the N frames playing now.
        let playing: UnsafeMutablePointer<Float>
        /// The (input spectrum, filter spectrum) pairs one output sums (paths × partitions at most).
        let xTerms: UnsafeMutablePointer<UnsafePointer<Float>?>
        let hTerms: UnsafeMutablePointer<UnsafePointer<Float>?>
        var head = 0

        init(block: Int, start: Int, partitions: Int, paths: [Path], inputCount: Int, outputCount: Int) {
            self.block = block
            self.partitions = partitions
            stride = (block + 1 + 7) & ~7
            let size = 2 * block
            time = FFTWPlanner.allocate(floats: size)
            spectrum = FFTWPlanner.allocate(floats: 2 * (block + 1))
            delayLine = FFTWPlanner.allocate(floats: inputCount * partitions * 2 * stride)
            filters = FFTWPlanner.allocate(floats: paths.count * partitions * 2 * stride)
            accumulator = FFTWPlanner.allocate(floats: 2 * stride)
            playing = FFTWPlanner.allocate(floats: outputCount * block)
            xTerms = .allocate(capacity: max(1, paths.count * partitions))
            xTerms.initialize(repeating: nil, count: max(1, paths.count * partitions))
            hTerms = .allocate(capacity: max(1, paths.count * partitions))
            hTerms.initialize(repeating: nil, count: max(1, paths.count * partitions))
            forwardPlan = FFTWPlanner.makeRealForward(size: size, input: time, output: spectrum)
            inversePlan = FFTWPlanner.makeRealInverse(size: size, input: spectrum, output: time)
            let scale = 1 / Float(size)
            for (k, path) in paths.enumerated() {
                for p in 0..<partitions {
                    time.update(repeating: 0, count: size)
                    let from = start + p * block
                    let count = max(0, min(block, path.response.count - from))
                    for i in 0..<count { time[i] = path.response[from + i] * scale }
                    FFTWPlanner.forward(forwardPlan, time, spectrum, size: size)
                    let re = filters + (k * partitions + p) * 2 * stride, im = re + stride
                    for b in 0...block { re[b] = spectrum[2 * b]; im[b] = spectrum[2 * b + 1] }
                }
            }
            time.update(repeating: 0, count: size)
        }

        deinit {
            FFTWPlanner.destroy(forwardPlan)
            FFTWPlanner.destroy(inversePlan)
            for p in [time, spectrum, delayLine, filters, accumulator, playing] { FFTWPlanner.free(p) }
            xTerms.deallocate()
            hTerms.deallocate()
        }

        func reset(inputCount: Int, outputCount: Int) {
            delayLine.update(repeating: 0, count: inputCount * partitions * 2 * stride)
            playing.update(repeating: 0, count: outputCount * block)
            head = 0
        }
    }

    // MARK: Fixed at init
    let inputCount: Int
    let outputCount: Int
    private let pathInputs: [Int]
    private let pathOutputs: [Int]
    /// Per path, the head taps (`headLength` each, zero-padded).
    private let heads: UnsafeMutablePointer<Float>
    private let levels: [Level]
    /// Frames of input history kept in front of the write position (2 × the largest block).
    private let historyFrames: Int
    private let historyCapacity: Int

    // MARK: Render thread only
    /// Per input channel, a linear history buffer of `historyCapacity` floats.
    private let history: UnsafeMutablePointer<Float>
    private var writePosition: Int
    /// Frames processed since reset.
    private var frame: Int64 = 0

    /// A convolver for `paths` between `inputCount` inputs and `outputCount` outputs. Control thread.
    init(inputCount: Int, outputCount: Int, paths: [Path]) {
        self.inputCount = inputCount
        self.outputCount = outputCount
        pathInputs = paths.map(\.input)
        pathOutputs = paths.map(\.output)
        let h = Self.headLength
        heads = FFTWPlanner.allocate(floats: max(1, paths.count) * h)
        for (k, path) in paths.enumerated() {
            for j in 0..<min(h, path.response.count) { heads[k * h + j] = path.response[j] }
        }
        let length = paths.map(\.response.count).max() ?? 0
        var levels: [Level] = []
        for (index, block) in Self.levelBlocks.enumerated() {
            let start = block
            if start >= length { break }
            let isLast = index == Self.levelBlocks.count - 1 || Self.levelBlocks[index + 1] >= length
            let end = isLast ? length : Self.levelBlocks[index + 1]
            let partitions = (end - start + block - 1) / block
            levels.append(Level(block: block, start: start, partitions: partitions, paths: paths,
                                inputCount: inputCount, outputCount: outputCount))
        }
        self.levels = levels
        historyFrames = 2 * max(h, levels.last?.block ?? h)
        historyCapacity = 2 * historyFrames
        history = FFTWPlanner.allocate(floats: max(1, inputCount) * historyCapacity)
        writePosition = historyFrames
        // Runs every path once (SIMD metadata and first-touch pages on the control thread).
        let zeros = FFTWPlanner.allocate(floats: h)
        let ins = [UnsafePointer<Float>](repeating: UnsafePointer(zeros), count: max(1, inputCount))
        let outs = (0..<max(1, outputCount)).map { _ in FFTWPlanner.allocate(floats: h) }
        ins.withUnsafeBufferPointer { i in
            outs.withUnsafeBufferPointer { o in
                for _ in 0..<(historyFrames / h) { process(inputs: i.baseAddress!, outputs: o.baseAddress!, frameCount: h) }
            }
        }
        for p in outs { FFTWPlanner.free(p) }
        FFTWPlanner.free(zeros)
        reset()
    }

    deinit {
        FFTWPlanner.free(heads)
        FFTWPlanner.free(history)
    }

    /// Forgets all input: silence in, silence out; blocks restart at the next frame. Real-time safe.
    func reset() {
        history.update(repeating: 0, count: max(1, inputCount) * historyCapacity)
        writePosition = historyFrames
        frame = 0
        for li in 0..<levels.count { levels[li].reset(inputCount: inputCount, outputCount: outputCount) }
    }

    /// Convolves `frameCount` frames of `inputs` (``inputCount`` channels) into `outputs`
    /// (``outputCount`` channels, overwritten). Real-time safe.
    func process(inputs: UnsafePointer<UnsafePointer<Float>>, outputs: UnsafePointer<UnsafeMutablePointer<Float>>,
                 frameCount: Int) {
        let h = Self.headLength
        var done = 0
        while done < frameCount {
            // Up to the next multiple of the head length (every level's boundary is one).
            let n = min(frameCount - done, h - Int(frame % Int64(h)))
            if writePosition + n > historyCapacity {
                for c in 0..<inputCount {
                    let base = history + c * historyCapacity
                    memmove(base, base + writePosition - historyFrames, historyFrames * MemoryLayout<Float>.stride)
                }
                writePosition = historyFrames
            }
            for c in 0..<inputCount { (history + c * historyCapacity + writePosition).update(from: inputs[c] + done, count: n) }
            // Direct-form head.
            for o in 0..<outputCount { (outputs[o] + done).update(repeating: 0, count: n) }
            for k in 0..<pathInputs.count {
                // Eight outputs at a time, each output's 64 products summed in order (CVectorKernels).
                ag_direct_fir64_accumulate(heads + k * h, history + pathInputs[k] * historyCapacity + writePosition,
                                           outputs[pathOutputs[k]] + done, Int32(n))
            }
            // FFT levels' blocks playing now.
            for li in 0..<levels.count {
                let level = levels[li]
                let phase = Int(frame % Int64(level.block))
                for o in 0..<outputCount {
                    let src = level.playing + o * level.block + phase, y = outputs[o] + done
                    for i in 0..<n { y[i] += src[i] }
                }
            }
            writePosition += n
            frame += Int64(n)
            done += n
            // (Index loops: a debug build's generic array iterator allocates.)
            for li in 0..<levels.count where frame % Int64(levels[li].block) == 0 { compute(levels[li]) }
        }
    }

    /// One block of `level`: transform the last 2N input frames of each input, multiply-add the
    /// partitions, transform back the second half for the next N frames.
    private func compute(_ level: Level) {
        let n = level.block, stride = level.stride, parts = level.partitions
        for c in 0..<inputCount {
            level.time.update(from: history + c * historyCapacity + writePosition - 2 * n, count: 2 * n)
            FFTWPlanner.forward(level.forwardPlan, level.time, level.spectrum, size: 2 * n)
            let re = level.delayLine + (c * parts + level.head) * 2 * stride, im = re + stride
            for b in 0...n {
                re[b] = level.spectrum[2 * b]
                im[b] = level.spectrum[2 * b + 1]
            }
        }
        for o in 0..<outputCount {
            let accR = level.accumulator, accI = level.accumulator + stride
            // Every partition of every path into `o`, eight bins at a time with the sums in
            // registers (CVectorKernels; the additions in the terms' order in each lane).
            var terms = 0
            for k in 0..<pathInputs.count where pathOutputs[k] == o {
                var slot = level.head
                for p in 0..<parts {
                    level.xTerms[terms] = UnsafePointer(level.delayLine + (pathInputs[k] * parts + slot) * 2 * stride)
                    level.hTerms[terms] = UnsafePointer(level.filters + (k * parts + p) * 2 * stride)
                    terms += 1
                    slot = slot == 0 ? parts - 1 : slot - 1
                }
            }
            ag_split_complex_sum_of_products(accR, accI, level.xTerms, level.hTerms, Int32(terms), Int32(stride), Int32(stride))
            for b in 0...n {
                level.spectrum[2 * b] = accR[b]
                level.spectrum[2 * b + 1] = accI[b]
            }
            FFTWPlanner.inverse(level.inversePlan, level.spectrum, level.time, size: 2 * n)
            (level.playing + o * n).update(from: level.time + n, count: n)
        }
        level.head = level.head + 1 == parts ? 0 : level.head + 1
    }
}
