// Zero-latency convolution: a direct-form head and non-uniformly partitioned FFT levels (FFTW), block-aligned.
import CFFTW

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Convolves up to a few input channels with impulse responses into output channels, with no
/// added latency: `y_o[n] = Σ over paths (i → o, h) of Σ_j h[j] · x_i[n - j]`.
///
/// **How.** The first ``headLength`` (64) taps of each response run in direct form, sample by
/// sample (a 64-term dot product). The rest is split into FFT levels with block sizes 64, 1024
/// and 16384: the level with block `N` covers taps `[N, 16N)` (15 partitions), the last level
/// everything from its `N` on (fewer, larger levels cost fewer transforms per frame: about 1900
/// flops per frame and path pair for a 3 s response, against 2500 with levels growing by 4); each level is a uniformly partitioned overlap-save
/// convolution (FFTs of `2N` points, a frequency-domain delay line of its partitions) computed
/// when an input block of `N` frames is complete and played during the next `N` frames — which
/// is exactly in time, because the level's taps start `N` frames late. Spectra from all paths
/// into one output are summed before the one inverse transform; each input channel is
/// transformed once per level. Blocks are aligned to frames counted from ``reset()``, so the
/// output is bit-identical whatever the call sizes.
///
/// **Cost**: per frame and path about 64 multiply-adds plus, per level, 15 (the last: its
/// partition count) complex multiply-adds per bin per block; at a multiple of 16384 frames every
/// level computes in the same call (the call that crosses it does the most work).
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
    /// Per path, the head taps reversed (`headLength` each, zero-padded).
    private let reversedHeads: UnsafeMutablePointer<Float>
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
        reversedHeads = FFTWPlanner.allocate(floats: max(1, paths.count) * h)
        for (k, path) in paths.enumerated() {
            for j in 0..<min(h, path.response.count) { reversedHeads[k * h + (h - 1 - j)] = path.response[j] }
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
        FFTWPlanner.free(reversedHeads)
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
                let x = history + pathInputs[k] * historyCapacity + writePosition - (h - 1)
                let taps = reversedHeads + k * h
                let y = outputs[pathOutputs[k]] + done
                for i in 0..<n { y[i] += Self.dot64(taps, x + i) }
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

    /// A 64-term dot product, eight lanes at a time.
    @inline(__always)
    private static func dot64(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>) -> Float {
        var s = SIMD8<Float>()
        let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
        for k in Swift.stride(from: 0, to: 64 * 4, by: 32) {
            s += ra.loadUnaligned(fromByteOffset: k, as: SIMD8<Float>.self) * rb.loadUnaligned(fromByteOffset: k, as: SIMD8<Float>.self)
        }
        return s.sum()
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
            accR.update(repeating: 0, count: 2 * stride)
            for k in 0..<pathInputs.count where pathOutputs[k] == o {
                var slot = level.head
                for p in 0..<parts {
                    let xr = level.delayLine + (pathInputs[k] * parts + slot) * 2 * stride
                    let hr = level.filters + (k * parts + p) * 2 * stride
                    Self.multiplyAdd(xr: xr, xi: xr + stride, hr: hr, hi: hr + stride, accR: accR, accI: accI, count: stride)
                    slot = slot == 0 ? parts - 1 : slot - 1
                }
            }
            for b in 0...n {
                level.spectrum[2 * b] = accR[b]
                level.spectrum[2 * b + 1] = accI[b]
            }
            FFTWPlanner.inverse(level.inversePlan, level.spectrum, level.time, size: 2 * n)
            (level.playing + o * n).update(from: level.time + n, count: n)
        }
        level.head = level.head + 1 == parts ? 0 : level.head + 1
    }

    /// `acc += x · h` over `count` complex values in split form (count a multiple of 8).
    @inline(__always)
    private static func multiplyAdd(xr: UnsafePointer<Float>, xi: UnsafePointer<Float>, hr: UnsafePointer<Float>,
                                    hi: UnsafePointer<Float>, accR: UnsafeMutablePointer<Float>,
                                    accI: UnsafeMutablePointer<Float>, count: Int) {
        let rxr = UnsafeRawPointer(xr), rxi = UnsafeRawPointer(xi), rhr = UnsafeRawPointer(hr), rhi = UnsafeRawPointer(hi)
        let rar = UnsafeMutableRawPointer(accR), rai = UnsafeMutableRawPointer(accI)
        for k in Swift.stride(from: 0, to: count * 4, by: 32) {
            let a = rxr.loadUnaligned(fromByteOffset: k, as: SIMD8<Float>.self)
            let b = rxi.loadUnaligned(fromByteOffset: k, as: SIMD8<Float>.self)
            let c = rhr.loadUnaligned(fromByteOffset: k, as: SIMD8<Float>.self)
            let d = rhi.loadUnaligned(fromByteOffset: k, as: SIMD8<Float>.self)
            let r = rar.loadUnaligned(fromByteOffset: k, as: SIMD8<Float>.self) + (a * c - b * d)
            let i = rai.loadUnaligned(fromByteOffset: k, as: SIMD8<Float>.self) + (a * d + b * c)
            rar.storeBytes(of: r, toByteOffset: k, as: SIMD8<Float>.self)
            rai.storeBytes(of: i, toByteOffset: k, as: SIMD8<Float>.self)
        }
    }
}
