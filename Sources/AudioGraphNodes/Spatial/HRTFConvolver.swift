// Binaural rendering of one mono source: uniform partitioned FFT convolution with an HRTF set, crossfaded on motion.

import CFFTW

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Convolves one mono source with the left and right impulse responses of the nearest measured
/// direction of an `HRTFSet`, by uniformly partitioned overlap-save FFT convolution (FFTW,
/// single precision; partitions and internal blocks of `set.blockSize` frames, FFTs of twice
/// that).
///
/// **Latency and determinism.** Input is gathered in a FIFO and processed in fixed internal
/// blocks of `blockSize` frames (128 by default) counted from the last `reset()`; the output is
/// therefore delayed by exactly `latency` = `blockSize` frames (2.67 ms at 48 kHz), and it is
/// bit-identical whatever the slice sizes the caller uses (1...4096, mixed).
///
/// **Motion.** The direction is sampled once per internal block, at the block's last frame. When
/// it selects another measurement, that block is rendered with both the old and the new filters
/// (each an exact convolution of the whole input history) and crossfaded per sample with a
/// raised-cosine ramp spanning the block (`blockSize` frames, aligned to block boundaries, so to
/// absolute frame time), so a moving source never clicks.
///
/// Thread safety: `init` and `deinit` run on a control thread (they allocate and plan FFTs).
/// `process` and `reset` belong to the render thread and are real-time safe: no allocation, no
/// locks (FFTW's new-array execute functions are thread-safe), no I/O. One instance serves one
/// source on one thread at a time.
package final class HRTFConvolver {
    /// The HRTF set in use (shared, immutable).
    package let hrtfSet: HRTFSet
    /// The output's delay relative to the input, in frames.
    package var latency: Int { hrtfSet.blockSize }

    // MARK: Immutable after init
    private let blockSize: Int
    private let fftSize: Int
    private let bins: Int
    private let stride: Int
    private let partitions: Int
    private let forwardPlan: OpaquePointer
    private let inversePlan: OpaquePointer
    /// The crossfade ramp, 0 → 1 over one block.
    private let fadeIn: UnsafeMutablePointer<Float>

    // MARK: Render thread only
    private let inputFIFO: UnsafeMutablePointer<Float>
    private let outputBlock: UnsafeMutablePointer<Float>      // [ear][blockSize]
    private let timeBuffer: UnsafeMutablePointer<Float>       // fftSize: previous + current block
    private let delayLine: UnsafeMutablePointer<Float>        // [partition][stride complex]
    private let accumulator: UnsafeMutablePointer<Float>      // stride complex
    private let inverseOutput: UnsafeMutablePointer<Float>    // fftSize
    private let newFilterOutput: UnsafeMutablePointer<Float>  // blockSize
    private var fill = 0
    private var head = 0
    /// The measurement the convolution uses; -1 before the first block.
    package private(set) var currentMeasurement = -1
    private var lastDirection = Vector3(.nan, .nan, .nan)
    private var lastNearest = 0
    /// Frames since the last non-zero input sample (saturating).
    private var quietFrames = Int.max / 2

    /// Whether every buffer is exactly zero, so that zero input gives zero output and
    /// ``skip(frameCount:direction:)`` is exactly equivalent to processing zeros: true once
    /// `(partitionCount + 3) · blockSize` zero frames have gone through.
    package var isQuiet: Bool { quietFrames >= (partitions + 3) * blockSize }

    /// Prepares a convolver for `set`. Call on a control thread.
    package init(set: HRTFSet) {
        self.hrtfSet = set
        blockSize = set.blockSize
        fftSize = set.fftSize
        bins = set.binCount
        stride = set.spectrumStride
        partitions = set.partitionCount
        inputFIFO = FFTWPlanner.allocate(floats: blockSize)
        outputBlock = FFTWPlanner.allocate(floats: 2 * blockSize)
        timeBuffer = FFTWPlanner.allocate(floats: fftSize)
        delayLine = FFTWPlanner.allocate(floats: partitions * stride * 2)
        accumulator = FFTWPlanner.allocate(floats: stride * 2)
        inverseOutput = FFTWPlanner.allocate(floats: fftSize)
        newFilterOutput = FFTWPlanner.allocate(floats: blockSize)
        fadeIn = FFTWPlanner.allocate(floats: blockSize)
        for i in 0..<blockSize {
            fadeIn[i] = Float(0.5 - 0.5 * cos(Double.pi * (Double(i) + 0.5) / Double(blockSize)))
        }
        forwardPlan = FFTWPlanner.makeRealForward(size: fftSize, input: timeBuffer, output: delayLine)
        inversePlan = FFTWPlanner.makeRealInverse(size: fftSize, input: accumulator, output: inverseOutput)
    }

    deinit {
        FFTWPlanner.destroy(forwardPlan)
        FFTWPlanner.destroy(inversePlan)
        for p in [inputFIFO, outputBlock, timeBuffer, delayLine, accumulator, inverseOutput, newFilterOutput, fadeIn] {
            FFTWPlanner.free(p)
        }
    }

    /// Forgets all history: silence in, silence out, block boundaries restart at the next frame.
    /// Real-time safe.
    package func reset() {
        inputFIFO.update(repeating: 0, count: blockSize)
        outputBlock.update(repeating: 0, count: 2 * blockSize)
        timeBuffer.update(repeating: 0, count: fftSize)
        delayLine.update(repeating: 0, count: partitions * stride * 2)
        fill = 0
        head = 0
        currentMeasurement = -1
        lastDirection = Vector3(.nan, .nan, .nan)
        quietFrames = Int.max / 2
    }

    /// Advances a quiet convolver by `frameCount` frames of silence without computing them
    /// (the filter choice still follows the direction at each block boundary crossed, as
    /// processing zeros would). Only valid when ``isQuiet`` (the output would be zeros).
    /// Real-time safe.
    package func skip(frameCount: Int, direction directionAt: (Int) -> Vector3) {
        assert(isQuiet, "skip needs a quiet convolver")
        let total = fill + frameCount
        let blocks = total / blockSize
        if blocks > 0 {
            // The last boundary crossed is at frame blocks·blockSize - fill - 1 of this call.
            let d = directionAt(blocks * blockSize - fill - 1)
            if d != lastDirection {
                lastDirection = d
                lastNearest = hrtfSet.nearestMeasurement(to: d)
            }
            currentMeasurement = lastNearest
            head = (head + blocks) % partitions
        }
        fill = total % blockSize
        quietFrames += frameCount
    }

    /// Renders `frameCount` frames of the mono `input`, with the source's direction for each
    /// frame in `directions` (our listener frame: x right, y up, z behind; any length), into
    /// `left` and `right` — added to what they hold when `accumulate` is true, written otherwise.
    /// Real-time safe.
    package func process(input: UnsafePointer<Float>, directions: UnsafePointer<Vector3>,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                        frameCount: Int, accumulate: Bool) {
        run(input: input, left: left, right: right, frameCount: frameCount, accumulate: accumulate) { directions[$0] }
    }

    /// `process` with one direction for the whole call. Real-time safe.
    package func process(input: UnsafePointer<Float>, direction: Vector3,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                        frameCount: Int, accumulate: Bool) {
        run(input: input, left: left, right: right, frameCount: frameCount, accumulate: accumulate) { _ in direction }
    }

    /// The FIFO loop; `directionAt(i)` is read only at frames that complete an internal block.
    @inline(__always)
    private func run(input: UnsafePointer<Float>, left: UnsafeMutablePointer<Float>,
                     right: UnsafeMutablePointer<Float>, frameCount: Int, accumulate: Bool,
                     directionAt: (Int) -> Vector3) {
        var done = 0
        while done < frameCount {
            let n = min(blockSize - fill, frameCount - done)
            let outL = outputBlock + fill, outR = outputBlock + blockSize + fill
            if accumulate {
                for i in 0..<n {
                    left[done + i] += outL[i]
                    right[done + i] += outR[i]
                }
            } else {
                (left + done).update(from: outL, count: n)
                (right + done).update(from: outR, count: n)
            }
            (inputFIFO + fill).update(from: input + done, count: n)
            var lastNonZero = -1
            for i in 0..<n where input[done + i] != 0 { lastNonZero = i }
            quietFrames = lastNonZero < 0 ? min(quietFrames + n, Int.max / 2) : n - 1 - lastNonZero
            fill += n
            done += n
            if fill == blockSize {
                processBlock(direction: directionAt(done - 1))
                fill = 0
            }
        }
    }

    /// One internal block: transform, select the filter, convolve, crossfade if it changed.
    private func processBlock(direction: Vector3) {
        // Overlap-save input: previous block then this block.
        timeBuffer.update(from: timeBuffer + blockSize, count: blockSize)
        (timeBuffer + blockSize).update(from: inputFIFO, count: blockSize)
        FFTWPlanner.forward(forwardPlan, timeBuffer, delayLine + head * stride * 2, size: fftSize)

        if direction != lastDirection {
            lastDirection = direction
            lastNearest = hrtfSet.nearestMeasurement(to: direction)
        }
        let target = lastNearest
        if currentMeasurement < 0 { currentMeasurement = target }

        for ear in 0..<2 {
            let out = outputBlock + ear * blockSize
            convolve(measurement: currentMeasurement, ear: ear, into: out)
            if target != currentMeasurement {
                convolve(measurement: target, ear: ear, into: newFilterOutput)
                for i in 0..<blockSize {
                    out[i] += fadeIn[i] * (newFilterOutput[i] - out[i])
                }
            }
        }
        currentMeasurement = target
        head = head + 1 == partitions ? 0 : head + 1
    }

    /// Sum over partitions of input spectrum × filter spectrum, inverse transform, keep the
    /// second half (overlap-save).
    @inline(__always)
    private func convolve(measurement: Int, ear: Int, into out: UnsafeMutablePointer<Float>) {
        accumulator.update(repeating: 0, count: 2 * bins)
        var slot = head
        for p in 0..<partitions {
            let x = delayLine + slot * stride * 2
            let h = hrtfSet.spectrum(measurement: measurement, ear: ear, partition: p)
            for k in 0..<bins {
                let xr = x[2 * k], xi = x[2 * k + 1]
                let hr = h[2 * k], hi = h[2 * k + 1]
                accumulator[2 * k] += xr * hr - xi * hi
                accumulator[2 * k + 1] += xr * hi + xi * hr
            }
            slot = slot == 0 ? partitions - 1 : slot - 1
        }
        FFTWPlanner.inverse(inversePlan, accumulator, inverseOutput, size: fftSize)
        out.update(from: inverseOutput + blockSize, count: blockSize)
    }
}
