// Feedback delay with a low-passed feedback path, fractional delay and click-free parameter changes.

import AudioGraphCore
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A multichannel feedback delay: per channel
/// `d[n] = x[n - D] + (feedback/100) * lp(d[n - D])`,
/// `y[n] = (1 - wetDryMix/100) * x[n] + (wetDryMix/100) * d[n]`, with `D = delayTime * sampleRate`
/// read by linear interpolation between neighbouring samples (zero before the start), and `lp`
/// the one-pole low-pass `s[n] = s[n-1] + a * (u[n] - s[n-1])`,
/// `a = 1 - exp(-2*pi*lowPassCutoff/sampleRate)`, the identity when
/// `lowPassCutoff >= sampleRate/2`.
///
/// - `delayTime` is at most ``maximumDelayTime`` (2 s). The feedback path reads at least one
///   frame back (`max(D, 1)`: a zero-delay loop cannot be computed), the dry path reads `D`
///   itself, so `delayTime` 0 with feedback 0 is the identity.
/// - A `delayTime` change crossfades from the old read position to the new one over
///   ``glideDuration`` (10 ms) instead of sliding the read position (which would pitch-shift and
///   zip); a change that arrives during a crossfade starts when that crossfade ends.
/// - `feedback` and `wetDryMix` move linearly over the given number of frames (default 10 ms;
///   0 for an exact step); `lowPassCutoff` glides in log frequency over 10 ms.
///
/// Every glide is a pure function of integer frame counts, so the output is bit-identical
/// however the frames are split into ``process(input:output:frameCount:)`` calls, provided the
/// setters are called at the same frames.
///
/// Thread safety: not thread-safe; owned by the render thread after `init` (which allocates
/// 2 s of history per channel: call it on the control thread). The setters, ``reset()`` and
/// ``process(input:output:frameCount:)`` are real-time safe.
package final class DelayLine {

    /// The longest delay time, seconds.
    package static let maximumDelayTime = MemoryBudget.maximumDelayTime
    /// How long delay-time crossfades and default parameter glides last, seconds.
    package static let glideDuration = 0.01

    // MARK: Fixed at init
    package let sampleRate: Double
    package let maximumChannelCount: Int
    /// Frames of a glide / crossfade.
    package let glideFrames: Int
    /// Ring buffer length (a power of two) and mask.
    let capacity: Int
    let mask: Int
    /// Per channel: input history at [c * capacity], delay-output history after those.
    let history: UnsafeMutablePointer<Float>
    /// Per channel low-pass state.
    let lowPassState: UnsafeMutablePointer<Double>

    // MARK: Render thread only
    /// Index where the next frame is written.
    var writeIndex = 0
    /// Delay in frames of the current read tap and of the tap being faded in.
    var tapFrames: Double
    var nextTapFrames: Double
    /// Frames left in the current crossfade (0: none).
    var fadeRemaining = 0
    /// A delay (frames) waiting for the current crossfade to end, or nil.
    var pendingTapFrames: Double?
    var feedbackGlide: LinearGlide
    var wetGlide: LinearGlide
    /// log(lowPassCutoff).
    var cutoffGlide: LinearGlide
    /// The cutoff (Hz) being approached, exactly as set (log/exp would not round-trip).
    var cutoffTarget: Double
    /// Tests only: take the general per-sample loop even when nothing glides (to compare it with
    /// the steady loop bit for bit).
    var testOnly_alwaysGeneralLoop = false

    /// Whether `delayTime` changes crossfade and `lowPassCutoff` glides (true, the default);
    /// false: both apply at the next frame (Web Audio's DelayNode reads at the new delay at once).
    public let smoothing: Bool

    /// A delay line for at most `maximumChannelCount` channels, settled on the given values.
    /// Allocates: control thread.
    package init(sampleRate: Double, maximumChannelCount: Int, delayTime: Double = 1, feedback: Double = 50,
                lowPassCutoff: Double = 15000, wetDryMix: Double = 100, smoothing: Bool = true) {
        self.smoothing = smoothing
        self.sampleRate = sampleRate
        self.maximumChannelCount = max(1, maximumChannelCount)
        self.glideFrames = max(1, Int((Self.glideDuration * sampleRate).rounded()))
        // The loader checked this size against the machine (MemoryBudget) before building.
        let cap = MemoryBudget.delayLineCapacity(sampleRate: sampleRate)
        capacity = cap
        mask = cap - 1
        history = .allocate(capacity: 2 * cap * self.maximumChannelCount)
        history.initialize(repeating: 0, count: 2 * cap * self.maximumChannelCount)
        lowPassState = .allocate(capacity: self.maximumChannelCount)
        lowPassState.initialize(repeating: 0, count: self.maximumChannelCount)
        let d = Self.clampDelay(delayTime, sampleRate)
        tapFrames = d
        nextTapFrames = d
        feedbackGlide = LinearGlide(feedback / 100)
        wetGlide = LinearGlide(wetDryMix / 100)
        cutoffGlide = LinearGlide(log(max(lowPassCutoff, 1e-3)))
        cutoffTarget = lowPassCutoff
    }

    deinit {
        history.deallocate()
        lowPassState.deallocate()
    }

    @inline(__always)
    static func clampDelay(_ seconds: Double, _ sampleRate: Double) -> Double {
        let frames = seconds * sampleRate
        return frames.isFinite ? min(max(frames, 0), maximumDelayTime * sampleRate) : 0
    }

    /// The delay time in effect (seconds; during a crossfade, the one being faded in).
    package var delayTime: Double { (pendingTapFrames ?? nextTapFrames) / sampleRate }

    /// Changes the delay time (seconds, clamped to 0...2), crossfading over 10 ms. Real-time safe.
    package func setDelayTime(_ seconds: Double) {
        let d = Self.clampDelay(seconds, sampleRate)
        if !smoothing {
            tapFrames = d
            nextTapFrames = d
            return
        }
        if fadeRemaining > 0 {
            pendingTapFrames = d == nextTapFrames ? nil : d
        } else if d != tapFrames {
            nextTapFrames = d
            fadeRemaining = glideFrames
        }
    }

    /// Changes the feedback (percent, -100...100) linearly over `rampFrames` (nil: 10 ms; 0: exact
    /// step). Real-time safe.
    package func setFeedback(_ percent: Double, rampFrames: Int? = nil) {
        feedbackGlide.set(percent / 100, frames: rampFrames ?? glideFrames)
    }

    /// Changes the wet/dry mix (percent wet, 0...100) linearly over `rampFrames` (nil: 10 ms; 0:
    /// exact step). Real-time safe.
    package func setWetDryMix(_ percent: Double, rampFrames: Int? = nil) {
        wetGlide.set(percent / 100, frames: rampFrames ?? glideFrames)
    }

    /// Changes the feedback low-pass cutoff (Hz), gliding in log frequency over 10 ms.
    /// Real-time safe.
    package func setLowPassCutoff(_ hertz: Double) {
        cutoffGlide.set(log(max(hertz, 1e-3)), frames: smoothing ? glideFrames : 0)
        cutoffTarget = hertz
    }

    /// Clears the history and low-pass state and settles every glide. Real-time safe.
    package func reset() {
        history.update(repeating: 0, count: 2 * capacity * maximumChannelCount)
        lowPassState.update(repeating: 0, count: maximumChannelCount)
        if let p = pendingTapFrames { nextTapFrames = p }
        tapFrames = nextTapFrames
        pendingTapFrames = nil
        fadeRemaining = 0
        feedbackGlide.advance(Int.max)
        wetGlide.advance(Int.max)
        cutoffGlide.advance(Int.max)
        writeIndex = 0
    }

    /// The low-pass coefficient for a cutoff in Hz; 1 means the identity.
    @inline(__always)
    func lowPassCoefficient(_ cutoff: Double) -> Double {
        cutoff >= sampleRate / 2 ? 1 : 1 - exp(-2 * Double.pi * cutoff / sampleRate)
    }

    /// Processes `frameCount` frames of each channel; `output` may be the same buffers as `input`.
    /// Channels beyond ``maximumChannelCount`` are ignored. Real-time safe.
    package func process(input: UnsafeBufferPointer<UnsafePointer<Float>>,
                        output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                        frameCount: Int) {
        let channels = min(input.count, output.count, maximumChannelCount)
        var done = 0
        while done < frameCount {
            // Runs end where a crossfade ends (a pending change may start there).
            let run = fadeRemaining > 0 ? min(frameCount - done, fadeRemaining) : frameCount - done
            if isSteady {
                // Channels two at a time: two independent feedback recurrences in one loop.
                let lowPass = lowPassCoefficient(cutoffTarget) != 1
                var c = 0
                while c + 1 < channels {
                    if lowPass {
                        steadyPair(channel: c, input[c] + done, input[c + 1] + done, output[c] + done,
                                   output[c + 1] + done, count: run, lowPass: true)
                    } else {
                        steadyPair(channel: c, input[c] + done, input[c + 1] + done, output[c] + done,
                                   output[c + 1] + done, count: run, lowPass: false)
                    }
                    c += 2
                }
                if c < channels {
                    processRun(channel: c, x: input[c] + done, y: output[c] + done, count: run)
                }
            } else {
                for c in 0..<channels {
                    processRun(channel: c, x: input[c] + done, y: output[c] + done, count: run)
                }
            }
            writeIndex = (writeIndex + run) & mask
            feedbackGlide.advance(run)
            wetGlide.advance(run)
            cutoffGlide.advance(run)
            if fadeRemaining > 0 {
                fadeRemaining -= run
                if fadeRemaining == 0 {
                    tapFrames = nextTapFrames
                    if let p = pendingTapFrames {
                        pendingTapFrames = nil
                        if p != tapFrames {
                            nextTapFrames = p
                            fadeRemaining = glideFrames
                        }
                    }
                }
            }
            done += run
        }
    }

    /// After ``process(input:output:frameCount:)`` of `frameCount` frames whose output is in
    /// `output`: when any output sample is NaN or infinite (a non-finite input, or an overflow),
    /// the non-finite values the slice wrote into the line's memory (input and output history,
    /// low-pass state) become 0, so the bad samples go no further than this slice — browsers'
    /// Web Audio delays reset their state the same way. The check is one branch-free vector pass
    /// over the output (``NonFiniteSamples/allFinite(_:count:)``); finite slices are left untouched. Real-time safe.
    package func clearNonFinite(output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        let channels = min(output.count, maximumChannelCount)
        for c in 0..<channels where !lowPassState[c].isFinite { lowPassState[c] = 0 }
        var finite = true
        for c in 0..<channels where !NonFiniteSamples.allFinite(output[c], count: frameCount) { finite = false }
        guard !finite else { return }
        let written = min(frameCount, capacity)
        for c in 0..<channels {
            let xs = history + 2 * c * capacity
            let ds = xs + capacity
            var w = (writeIndex - written) & mask
            for _ in 0..<written {
                if !xs[w].isFinite { xs[w] = 0 }
                if !ds[w].isFinite { ds[w] = 0 }
                w = (w + 1) & mask
            }
        }
    }

    /// Reads `buffer` (ring of `capacity`) `delay` frames before `index`, linearly interpolated.
    @inline(__always)
    func read(_ buffer: UnsafeMutablePointer<Float>, at index: Int, delay: Double) -> Double {
        let k0 = delay.rounded(.down)
        let frac = delay - k0
        let i0 = (index - Int(k0)) & mask
        let v0 = Double(buffer[i0])
        if frac == 0 { return v0 }
        let v1 = Double(buffer[(i0 - 1) & mask])
        return v0 * (1 - frac) + v1 * frac
    }

    @inline(__always)
    private func processRun(channel c: Int, x: UnsafePointer<Float>, y: UnsafeMutablePointer<Float>, count: Int) {
        let xs = history + 2 * c * capacity
        let ds = xs + capacity
        if isSteady {
            // Nothing moves: the loop below with every per-sample value hoisted (the same arithmetic).
            if lowPassCoefficient(cutoffTarget) == 1 {
                steadyRun(channel: c, xs: xs, ds: ds, x: x, y: y, count: count, lowPass: false)
            } else {
                steadyRun(channel: c, xs: xs, ds: ds, x: x, y: y, count: count, lowPass: true)
            }
            return
        }
        var s = lowPassState[c]
        let steadyCutoff = cutoffGlide.isSettled
        let steadyA = lowPassCoefficient(cutoffTarget)
        let fadeFrames = Double(glideFrames)
        var w = writeIndex
        for i in 0..<count {
            let xn = x[i]
            xs[w] = xn
            let fb = feedbackGlide.value(at: i)
            let wet = wetGlide.value(at: i)
            let a = steadyCutoff ? steadyA : lowPassCoefficient(exp(cutoffGlide.value(at: i)))
            // The delayed input and delayed output, crossfaded between taps while fading.
            var xd = read(xs, at: w, delay: tapFrames)
            var dd = read(ds, at: w, delay: max(tapFrames, 1))
            if fadeRemaining > 0 {
                // Fraction of the new tap: reaches 1 on the fade's last frame.
                let g = 1 - Double(fadeRemaining - 1 - i) / fadeFrames
                xd = xd * (1 - g) + read(xs, at: w, delay: nextTapFrames) * g
                dd = dd * (1 - g) + read(ds, at: w, delay: max(nextTapFrames, 1)) * g
            }
            if a == 1 { s = dd } else { s += a * (dd - s) }
            // Flush tiny values before they turn subnormal (slow); per sample, so deterministic.
            if abs(s) < 1e-30 { s = 0 }
            var d = xd + fb * s
            if abs(d) < 1e-30 { d = 0 }
            ds[w] = Float(d)
            y[i] = Float((1 - wet) * Double(xn) + wet * d)
            w = (w + 1) & mask
        }
        lowPassState[c] = s
    }

    /// Whether nothing glides or crossfades (the steady loops apply).
    @inline(__always)
    var isSteady: Bool {
        fadeRemaining == 0 && !testOnly_alwaysGeneralLoop && feedbackGlide.isSettled && wetGlide.isSettled
            && cutoffGlide.isSettled
    }

    /// ``steadyRun(channel:xs:ds:x:y:count:lowPass:)`` for channels `c` and `c + 1` in one loop
    /// (the same arithmetic per channel).
    @inline(__always)
    private func steadyPair(channel c: Int, _ x0: UnsafePointer<Float>, _ x1: UnsafePointer<Float>,
                            _ y0: UnsafeMutablePointer<Float>, _ y1: UnsafeMutablePointer<Float>, count: Int,
                            lowPass: Bool) {
        let xs0 = history + 2 * c * capacity, ds0 = xs0 + capacity
        let xs1 = ds0 + capacity, ds1 = xs1 + capacity
        var s0 = lowPassState[c], s1 = lowPassState[c + 1]
        let fb = feedbackGlide.target, wet = wetGlide.target, dry = 1 - wet
        let a = lowPassCoefficient(cutoffTarget)
        let inputTap = tapFrames, outputTap = max(tapFrames, 1)
        var w = writeIndex
        if inputTap == inputTap.rounded(.down) {
            // A whole number of frames (a delay time on the frame grid, the usual case): no
            // interpolation, and the run is cut where a ring index wraps, so the loop walks
            // plain pointers without masking (the same arithmetic as `steadyTick`).
            let kIn = Int(inputTap), kOut = Int(outputTap)
            var i = 0
            while i < count {
                let rIn = (w - kIn) & mask, rOut = (w - kOut) & mask
                // Two-argument mins: the variadic one builds an array (an allocation).
                let n = min(min(count - i, capacity - w), min(capacity - rIn, capacity - rOut))
                var j = 0
                // Without the low-pass no frame depends on the one before, only on frames at least
                // kOut back: four at a time when kOut >= 4 (what the scalar loop computes, lane by lane).
                if !lowPass && kOut >= 4 {
                    while j &+ 4 <= n {
                        wholeQuad(xs0 + (w &+ j), xs0 + (rIn &+ j), ds0 + (rOut &+ j), ds0 + (w &+ j), x0 + (i &+ j),
                                  y0 + (i &+ j), &s0, fb: fb, wet: wet, dry: dry)
                        wholeQuad(xs1 + (w &+ j), xs1 + (rIn &+ j), ds1 + (rOut &+ j), ds1 + (w &+ j), x1 + (i &+ j),
                                  y1 + (i &+ j), &s1, fb: fb, wet: wet, dry: dry)
                        j &+= 4
                    }
                }
                for j in j..<n {
                    y0[i + j] = wholeTick(xs0 + w + j, xs0 + rIn + j, ds0 + rOut + j, ds0 + w + j, x0[i + j], &s0,
                                          a: a, fb: fb, wet: wet, dry: dry, lowPass: lowPass)
                    y1[i + j] = wholeTick(xs1 + w + j, xs1 + rIn + j, ds1 + rOut + j, ds1 + w + j, x1[i + j], &s1,
                                          a: a, fb: fb, wet: wet, dry: dry, lowPass: lowPass)
                }
                i += n
                w = (w + n) & mask
            }
            lowPassState[c] = s0
            lowPassState[c + 1] = s1
            return
        }
        for i in 0..<count {
            let v0 = steadyTick(xs0, ds0, x0[i], &s0, at: w, inputTap: inputTap, outputTap: outputTap, a: a, fb: fb,
                                wet: wet, dry: dry, lowPass: lowPass)
            let v1 = steadyTick(xs1, ds1, x1[i], &s1, at: w, inputTap: inputTap, outputTap: outputTap, a: a, fb: fb,
                                wet: wet, dry: dry, lowPass: lowPass)
            y0[i] = v0
            y1[i] = v1
            w = (w + 1) & mask
        }
        lowPassState[c] = s0
        lowPassState[c + 1] = s1
    }

    /// ``processRun(channel:x:y:count:)`` when no glide or crossfade is under way: feedback, mix,
    /// low-pass coefficient and taps are constants, and `lowPass` (false: the coefficient is 1)
    /// is a constant at each call site, so the loop carries no branch but the flushes.
    @inline(__always)
    private func steadyRun(channel c: Int, xs: UnsafeMutablePointer<Float>, ds: UnsafeMutablePointer<Float>,
                           x: UnsafePointer<Float>, y: UnsafeMutablePointer<Float>, count: Int, lowPass: Bool) {
        var s = lowPassState[c]
        let fb = feedbackGlide.target, wet = wetGlide.target, dry = 1 - wet
        let a = lowPassCoefficient(cutoffTarget)
        let inputTap = tapFrames, outputTap = max(tapFrames, 1)
        var w = writeIndex
        if inputTap == inputTap.rounded(.down) {
            // Whole-frame taps: ``steadyPair``'s pointer walk for one channel (a mono delay).
            let kIn = Int(inputTap), kOut = Int(outputTap)
            var i = 0
            while i < count {
                let rIn = (w - kIn) & mask, rOut = (w - kOut) & mask
                let n = min(min(count - i, capacity - w), min(capacity - rIn, capacity - rOut))
                var j = 0
                if !lowPass && kOut >= 4 {
                    while j &+ 4 <= n {
                        wholeQuad(xs + (w &+ j), xs + (rIn &+ j), ds + (rOut &+ j), ds + (w &+ j), x + (i &+ j),
                                  y + (i &+ j), &s, fb: fb, wet: wet, dry: dry)
                        j &+= 4
                    }
                }
                for j in j..<n {
                    y[i + j] = wholeTick(xs + w + j, xs + rIn + j, ds + rOut + j, ds + w + j, x[i + j], &s,
                                         a: a, fb: fb, wet: wet, dry: dry, lowPass: lowPass)
                }
                i += n
                w = (w + n) & mask
            }
            lowPassState[c] = s
            return
        }
        for i in 0..<count {
            y[i] = steadyTick(xs, ds, x[i], &s, at: w, inputTap: inputTap, outputTap: outputTap, a: a, fb: fb,
                              wet: wet, dry: dry, lowPass: lowPass)
            w = (w + 1) & mask
        }
        lowPassState[c] = s
    }

    /// ``steadyTick(_:_:_:_:at:inputTap:outputTap:a:fb:wet:dry:lowPass:)`` for whole-frame taps,
    /// its ring positions given as pointers: writes `xn` at `xw`, reads the delayed input at `xr`
    /// and the delayed output at `dr`, writes the delay's output at `dw`.
    @inline(__always)
    private func wholeTick(_ xw: UnsafeMutablePointer<Float>, _ xr: UnsafeMutablePointer<Float>,
                           _ dr: UnsafeMutablePointer<Float>, _ dw: UnsafeMutablePointer<Float>, _ xn: Float,
                           _ s: inout Double, a: Double, fb: Double, wet: Double, dry: Double, lowPass: Bool) -> Float {
        xw.pointee = xn
        let xd = Double(xr.pointee)
        let dd = Double(dr.pointee)
        if lowPass { s += a * (dd - s) } else { s = dd }
        if abs(s) < 1e-30 { s = 0 }
        var d = xd + fb * s
        if abs(d) < 1e-30 { d = 0 }
        dw.pointee = Float(d)
        return Float(dry * Double(xn) + wet * d)
    }

    /// ``wholeTick`` without the low-pass for four consecutive frames whose delayed output was
    /// written before them (kOut >= 4): stores the input first (a delayed-input read may reach it,
    /// as in the scalar order), then the same per-frame arithmetic in Double, lane by lane, so the
    /// samples are bit-identical; `s` ends as the last frame's.
    @inline(__always)
    private func wholeQuad(_ xw: UnsafeMutablePointer<Float>, _ xr: UnsafeMutablePointer<Float>,
                           _ dr: UnsafeMutablePointer<Float>, _ dw: UnsafeMutablePointer<Float>,
                           _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>,
                           _ s: inout Double, fb: Double, wet: Double, dry: Double) {
        let xn = UnsafeRawPointer(x).loadUnaligned(as: SIMD4<Float>.self)
        UnsafeMutableRawPointer(xw).storeBytes(of: xn, as: SIMD4<Float>.self)
        let xd = SIMD4<Double>(UnsafeRawPointer(xr).loadUnaligned(as: SIMD4<Float>.self))
        var dd = SIMD4<Double>(UnsafeRawPointer(dr).loadUnaligned(as: SIMD4<Float>.self))
        dd.replace(with: 0, where: (dd .< 1e-30) .& (dd .> -1e-30))
        var d = xd + fb * dd
        d.replace(with: 0, where: (d .< 1e-30) .& (d .> -1e-30))
        UnsafeMutableRawPointer(dw).storeBytes(of: SIMD4<Float>(d), as: SIMD4<Float>.self)
        UnsafeMutableRawPointer(y).storeBytes(of: SIMD4<Float>(dry * SIMD4<Double>(xn) + wet * d), as: SIMD4<Float>.self)
        s = dd[3]
    }

    /// One frame of one channel in the steady loops: writes `xn` to the input history and the
    /// delay's output to the output history at `w`, returns the frame's output.
    @inline(__always)
    private func steadyTick(_ xs: UnsafeMutablePointer<Float>, _ ds: UnsafeMutablePointer<Float>, _ xn: Float,
                            _ s: inout Double, at w: Int, inputTap: Double, outputTap: Double, a: Double,
                            fb: Double, wet: Double, dry: Double, lowPass: Bool) -> Float {
        xs[w] = xn
        let xd = read(xs, at: w, delay: inputTap)
        let dd = read(ds, at: w, delay: outputTap)
        if lowPass { s += a * (dd - s) } else { s = dd }
        // Flush tiny values before they turn subnormal (slow); per sample, so deterministic.
        if abs(s) < 1e-30 { s = 0 }
        var d = xd + fb * s
        if abs(d) < 1e-30 { d = 0 }
        ds[w] = Float(d)
        return Float(dry * Double(xn) + wet * d)
    }
}
