// One equalizer band as a filter section: cookbook biquad, per-channel state, click-free glides.

import CVectorKernels
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// One second-order filter section (one EQ band) with per-channel state, computed in Double in
/// transposed direct form II, whose parameter changes glide instead of clicking.
///
/// Parameter changes (``setTarget(_:)``):
/// - `frequency`, `gain` and `q` glide linearly in the log-frequency / dB / log-q domain from
///   their current values to the new targets over ``glideDuration`` (10 ms, rounded to whole
///   frames), then land exactly on the targets. A new target during a glide starts a new glide
///   from wherever the old one was.
/// - While gliding, coefficients are recomputed from the glided values at every frame whose
///   absolute index is a multiple of ``coefficientUpdateInterval`` (1: every frame; a coarser
///   grid such as 16 makes audible steps on large frequency glides, measured in the tests), and
///   once more at the first such frame after the glide has landed, so they are exact from then on.
/// - `bypass` crossfades between the filtered and the dry signal over the same 10 ms (the
///   filter keeps running while bypassed, so un-bypassing does not click either).
/// - A `type` change applies at once (recomputed coefficients, glides land immediately); types
///   are properties set before rendering, not real-time parameters.
///
/// All glide state is per sample and driven by integer frame counts, so the output is
/// bit-identical however the frames are split into ``process(input:output:frameCount:startFrame:)``
/// calls, provided ``setTarget(_:)`` is called at the same frames.
///
/// Thread safety: not thread-safe; owned by the render thread (create it and call `init` on the
/// control thread, then hand it over). ``setTarget(_:)``, ``reset()`` and ``process`` are
/// real-time safe: no allocation, locks or throwing.
package final class Biquad {

    /// How long a parameter step glides, seconds.
    package static let glideDuration = 0.01
    /// Coefficients are recomputed while gliding at frames that are multiples of this (the grid is
    /// aligned to the absolute frame index, so it does not depend on slice boundaries).
    package static let coefficientUpdateInterval = 1

    // MARK: Fixed at init
    /// Frames per second.
    package let sampleRate: Double
    /// The number of channels ``process`` accepts at most (state is allocated for that many).
    package let maximumChannelCount: Int
    /// Frames a glide lasts (at least 1).
    let glideFrames: Int

    // MARK: Render thread only
    /// The band being approached (the last target set).
    package private(set) var band: EQBand
    /// The coefficients in use.
    package private(set) var coefficients: BiquadCoefficients
    /// Glide start and target in the log-frequency / dB / log-q domain; `glideRemaining` counts
    /// the frames left (0: landed).
    var startLogFrequency = 0.0, startGain = 0.0, startLogQ = 0.0
    var targetLogFrequency = 0.0, targetGain = 0.0, targetLogQ = 0.0
    var glideRemaining = 0
    var coefficientsDirty = false
    /// Bypass crossfade: frames left of the fade toward `band.bypass` (0: settled).
    var bypassRemaining = 0
    /// Per-channel transposed-direct-form-II state: z1 at [2c], z2 at [2c+1].
    let state: UnsafeMutablePointer<Double>

    /// Whether parameter changes glide and bypass crossfades (true, the default); false: every
    /// change applies at the next frame, as Web Audio's BiquadFilterNode (coefficients exact at
    /// once, bypass a switch).
    let smoothing: Bool

    /// A section for at most `maximumChannelCount` channels, starting settled on `band`
    /// (`smoothing`: see ``smoothing``). Allocates: call on the control thread.
    package init(band: EQBand, sampleRate: Double, maximumChannelCount: Int, smoothing: Bool = true) {
        self.smoothing = smoothing
        self.sampleRate = sampleRate
        self.maximumChannelCount = max(1, maximumChannelCount)
        self.glideFrames = max(1, Int((Self.glideDuration * sampleRate).rounded()))
        self.band = band
        self.coefficients = BiquadCoefficients.cookbook(band, sampleRate: sampleRate)
        self.state = .allocate(capacity: 2 * self.maximumChannelCount)
        self.state.initialize(repeating: 0, count: 2 * self.maximumChannelCount)
        land()
    }

    deinit {
        state.deallocate()
    }

    /// Glide coordinates, kept finite for out-of-range values (the cookbook clamps the same way).
    @inline(__always) static func logFrequency(_ b: EQBand) -> Double { log(max(b.frequency, 1e-3)) }
    @inline(__always) static func logQ(_ b: EQBand) -> Double { log(max(b.q, 1e-6)) }

    /// Puts the glide on its target and the coefficients on the target's.
    private func land() {
        targetLogFrequency = Self.logFrequency(band)
        targetGain = band.gain
        targetLogQ = Self.logQ(band)
        startLogFrequency = targetLogFrequency
        startGain = targetGain
        startLogQ = targetLogQ
        glideRemaining = 0
        coefficients = BiquadCoefficients.cookbook(band, sampleRate: sampleRate)
        coefficientsDirty = false
    }

    /// The glided values at the current frame.
    @inline(__always)
    func currentValues() -> (logFrequency: Double, gain: Double, logQ: Double) {
        if glideRemaining == 0 { return (targetLogFrequency, targetGain, targetLogQ) }
        let r = Double(glideRemaining) / Double(glideFrames)
        return (targetLogFrequency + (startLogFrequency - targetLogFrequency) * r,
                targetGain + (startGain - targetGain) * r,
                targetLogQ + (startLogQ - targetLogQ) * r)
    }

    /// Sets the band to approach from the next processed frame (see the type's discussion).
    /// Setting the band already targeted does nothing. Real-time safe.
    package func setTarget(_ newBand: EQBand) {
        if newBand == band { return }
        let old = band
        band = newBand
        if newBand.type != old.type || !smoothing {
            land()
        } else if newBand.frequency != old.frequency || newBand.gain != old.gain || newBand.q != old.q {
            let now = currentValues()
            startLogFrequency = now.logFrequency
            startGain = now.gain
            startLogQ = now.logQ
            targetLogFrequency = Self.logFrequency(newBand)
            targetGain = newBand.gain
            targetLogQ = Self.logQ(newBand)
            glideRemaining = glideFrames
            coefficientsDirty = true
        }
        if newBand.bypass != old.bypass && smoothing {
            // Reverse the fade from where it is.
            bypassRemaining = glideFrames - bypassRemaining
        }
    }

    /// Clears the filter memory and lands every glide (for a stream restart). Real-time safe.
    package func reset() {
        state.update(repeating: 0, count: 2 * maximumChannelCount)
        land()
        bypassRemaining = 0
    }

    /// Clears the memory of every channel whose state is NaN or infinite (a non-finite input
    /// sample, or an overflow), as browsers' Web Audio biquads do after each render quantum: the
    /// bad value reaches at most the rest of the slice that carried it, never the slices after.
    /// Finite state is left untouched (the output of finite input is unchanged). Call once per
    /// slice; real-time safe.
    @inline(__always)
    package func clearNonFiniteState() {
        for c in 0..<maximumChannelCount where !(state[2 * c] + state[2 * c + 1]).isFinite {
            state[2 * c] = 0
            state[2 * c + 1] = 0
        }
    }

    /// Filters `frameCount` frames of each channel; `output` may be the same buffers as `input`.
    ///
    /// - Parameters:
    ///   - input: one pointer per channel (at most ``maximumChannelCount``; extra are ignored).
    ///   - output: one pointer per channel, as many as `input`.
    ///   - startFrame: the absolute index of the first frame (the coefficient-update grid).
    ///
    /// Real-time safe.
    package func process(input: UnsafeBufferPointer<UnsafePointer<Float>>,
                        output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                        frameCount: Int, startFrame: Int64) {
        let channels = min(input.count, output.count, maximumChannelCount)
        let grid = Int64(Self.coefficientUpdateInterval)
        var done = 0
        while done < frameCount {
            let frame = startFrame + Int64(done)
            var run = frameCount - done
            if coefficientsDirty {
                let phase = Int(((frame % grid) + grid) % grid)
                if phase == 0 {
                    if glideRemaining == 0 {
                        // Landed: the exact target's coefficients.
                        coefficients = BiquadCoefficients.cookbook(band, sampleRate: sampleRate)
                        coefficientsDirty = false
                    } else {
                        let v = currentValues()
                        coefficients = BiquadCoefficients.cookbook(
                            type: band.type, frequency: exp(v.logFrequency), gain: v.gain, q: exp(v.logQ),
                            sampleRate: sampleRate)
                    }
                }
                run = min(run, Self.coefficientUpdateInterval - phase)
            }
            filterChannels(input, output, channels: channels, offset: done, count: run)
            glideRemaining = max(0, glideRemaining - run)
            bypassRemaining = max(0, bypassRemaining - run)
            done += run
        }
    }

    /// Whether the section is settled: coefficients on the target, no bypass (settled or fading).
    /// Only then may it run in ``processSteadyCascade(_:channels:buffers:frameCount:coefficients:state:)``.
    var isSteady: Bool { !coefficientsDirty && bypassRemaining == 0 && !band.bypass }

    /// Filters a run of every channel with the current coefficients: channels two at a time (two
    /// independent recurrences in one loop keep the FPU busy), the branches hoisted out of the loops.
    @inline(__always)
    private func filterChannels(_ input: UnsafeBufferPointer<UnsafePointer<Float>>,
                                _ output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                                channels: Int, offset: Int, count: Int) {
        if bypassRemaining > 0 {
            for c in 0..<channels { fadeRun(input[c] + offset, output[c] + offset, count: count, z: state + 2 * c) }
            return
        }
        let k = coefficients
        var c = 0
        while c + 1 < channels {
            Self.pairRun(k, input[c] + offset, input[c + 1] + offset, output[c] + offset, output[c + 1] + offset,
                         count: count, z: state + 2 * c, bypassed: band.bypass)
            c += 2
        }
        if c < channels {
            Self.singleRun(k, input[c] + offset, output[c] + offset, count: count, z: state + 2 * c, bypassed: band.bypass)
        }
    }

    /// One step of the transposed-direct-form-II recurrence, with tiny states flushed to 0 before
    /// they become subnormal (slow). Every path below computes exactly this, so all agree bit for bit.
    @inline(__always)
    static func step(_ k: BiquadCoefficients, _ xi: Double, _ z1: inout Double, _ z2: inout Double) -> Double {
        let yi = k.b0 * xi + z1
        z1 = k.b1 * xi - k.a1 * yi + z2
        z2 = k.b2 * xi - k.a2 * yi
        if abs(z1) < 1e-200 { z1 = 0 }
        if abs(z2) < 1e-200 { z2 = 0 }
        return yi
    }

    /// One channel's run, settled (filtered, or the dry signal while the filter keeps running).
    @inline(__always)
    static func singleRun(_ k: BiquadCoefficients, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>,
                          count: Int, z: UnsafeMutablePointer<Double>, bypassed: Bool) {
        var z1 = z[0], z2 = z[1]
        if bypassed {
            for i in 0..<count { let xi = x[i]; _ = step(k, Double(xi), &z1, &z2); y[i] = xi }
        } else {
            for i in 0..<count { y[i] = Float(step(k, Double(x[i]), &z1, &z2)) }
        }
        z[0] = z1
        z[1] = z2
    }

    /// Two channels' runs in one loop (`z`: z1, z2 of the first, then of the second).
    @inline(__always)
    static func pairRun(_ k: BiquadCoefficients, _ x0: UnsafePointer<Float>, _ x1: UnsafePointer<Float>,
                        _ y0: UnsafeMutablePointer<Float>, _ y1: UnsafeMutablePointer<Float>,
                        count: Int, z: UnsafeMutablePointer<Double>, bypassed: Bool) {
        var z10 = z[0], z20 = z[1], z11 = z[2], z21 = z[3]
        if bypassed {
            for i in 0..<count {
                let a = x0[i], b = x1[i]
                _ = step(k, Double(a), &z10, &z20)
                _ = step(k, Double(b), &z11, &z21)
                y0[i] = a
                y1[i] = b
            }
        } else {
            for i in 0..<count {
                let a = step(k, Double(x0[i]), &z10, &z20)
                let b = step(k, Double(x1[i]), &z11, &z21)
                y0[i] = Float(a)
                y1[i] = Float(b)
            }
        }
        z[0] = z10; z[1] = z20; z[2] = z11; z[3] = z21
    }

    /// Runs ``processSteadyCascade(_:channels:buffers:frameCount:coefficients:state:)`` once on a
    /// silent block, once per process: in debug builds its SIMD operations are unspecialised
    /// generic calls, and the first one builds the SIMD types' runtime metadata (an allocation and
    /// a lock inside the Swift runtime), which must happen on a control thread, not the render
    /// thread. Kernels that cascade read it in their initialisers.
    static let simdMetadataReady: Void = {
        _ = wavefrontAVX2
        let sections = ContiguousArray((0..<3).map { _ in
            Biquad(band: EQBand(type: .peak), sampleRate: 48000, maximumChannelCount: 3)
        })
        let frames = 8
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: 3 * frames)
        let sizes = cascadeScratchCounts(sections: 3, channels: 3)
        let coefficients = UnsafeMutablePointer<Double>.allocate(capacity: sizes.coefficients)
        let state = UnsafeMutablePointer<Double>.allocate(capacity: sizes.state)
        samples.initialize(repeating: 0, count: 3 * frames)
        coefficients.initialize(repeating: 0, count: sizes.coefficients)
        state.initialize(repeating: 0, count: sizes.state)
        let buffers = [samples, samples + frames, samples + 2 * frames]
        buffers.withUnsafeBufferPointer {
            // Both the frame-by-frame loops (fewer frames than sections) and the wavefront ones.
            processSteadyCascade(sections, channels: 3, buffers: $0, frameCount: 1,
                                 coefficients: coefficients, state: state)
            processSteadyCascade(sections, channels: 3, buffers: $0, frameCount: frames,
                                 coefficients: coefficients, state: state)
        }
        samples.deallocate()
        coefficients.deallocate()
        state.deallocate()
    }()

    /// The scratch ``processSteadyCascade(_:channels:buffers:frameCount:coefficients:state:)``
    /// needs for `sections` sections of `channels` channels, in Doubles.
    package static func cascadeScratchCounts(sections: Int, channels: Int) -> (coefficients: Int, state: Int) {
        let k = max(1, sections), c = max(1, channels), pairs = (k + 1) / 2
        // Coefficients: per section b0 b0 b1 b1 b2 b2 a1 a1 a2 a2 (channel lanes), then per section
        // pair the same with the two sections in the lanes. State: per section the channels' z1/z2,
        // then the odd channel's z1/z2 in section lanes, then the values in flight between sections
        // (a SIMD2 per section, and a Double per section lane).
        // Then the AVX2 loops' own copies (``wavefrontAVX2``).
        return (10 * k + 10 * pairs, 2 * c * k + 4 * pairs + 2 * k + 2 * pairs + 32 * pairs + 4)
    }

    /// Whether the wavefront's full steps run in the AVX2 loops of `CVectorKernels` (this machine
    /// has AVX2): the same arithmetic lane by lane, two sections of a channel pair or four of one
    /// channel per instruction, so the same bits as the Swift loops (which run otherwise; tests
    /// set it to false to check them). Read once on a control thread before rendering
    /// (``simdMetadataReady`` does).
    nonisolated(unsafe) package static var wavefrontAVX2 = ag_biquad_wavefront_avx2_available() != 0
    /// Whether an odd channel's wavefront takes the AVX2 loop too (with ``wavefrontAVX2``). With
    /// four sections per instruction each step waits on the one before it (the shift across the
    /// lanes and the wider conversions' latency): through memory it measured slower than the Swift
    /// loop (KernelBench biquad1, thread CPU time: 75-77 ms against 57-67 ms for 120 s), with the
    /// state and the values in flight in registers faster (1.33-1.35 against 1.08-1.11 G
    /// section-samples/s). Tests turn it off to check the Swift loop.
    nonisolated(unsafe) package static var singleWavefrontAVX2 = true

    /// Filters `frameCount` frames of `buffers` in place through every section of `sections` in
    /// order. Every section must be ``isSteady``. The result is bit-identical to calling
    /// ``process(input:output:frameCount:startFrame:)`` on each section in turn (the same
    /// operations per lane, the same Float rounding between sections).
    ///
    /// Channels go two at a time in the lanes of a `SIMD2<Double>`. With at least as many frames
    /// as sections the sections run as a wavefront: at step `t` section `s` filters frame `t - s`,
    /// so the sections of one step do not depend on each other (each takes what the section before
    /// it gave one step earlier) and the processor overlaps them, instead of waiting on a frame's
    /// way down the cascade. An odd channel runs the same wavefront with two sections in the lanes.
    /// The first and last `sections.count - 1` steps (where the wavefront enters and leaves the
    /// block) run section by section on the buffer, except in the odd channel's AVX2 loop, which
    /// runs them as steps with the sections that have no frame masked (a long fused chain spends
    /// half its time there otherwise). With fewer frames: frame by frame, all sections of a frame,
    /// then the next.
    ///
    /// - Parameters:
    ///   - coefficients: scratch for ``cascadeScratchCounts(sections:channels:)``'s `coefficients` values.
    ///   - state: scratch for its `state` values.
    ///
    /// Real-time safe.
    package static func processSteadyCascade(_ sections: ContiguousArray<Biquad>, channels: Int,
                                     buffers: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frameCount: Int,
                                     coefficients: UnsafeMutablePointer<Double>, state: UnsafeMutablePointer<Double>) {
        let count = sections.count
        if count == 0 || frameCount <= 0 { return }
        var channels = min(channels, buffers.count)
        for s in 0..<count { channels = min(channels, sections[s].maximumChannelCount) }
        if channels <= 0 { return }
        let paired = channels & ~1
        let pairs = (count + 1) / 2
        let laneCoefficients = coefficients + 10 * count
        let laneState = state + 2 * channels * count
        let inFlight = laneState + 4 * pairs
        let laneInFlight = inFlight + 2 * count
        let vectorScratch = laneInFlight + 2 * pairs
        // Scratch layout: per section, per channel pair (z1 c, z1 c+1, z2 c, z2 c+1), then the odd
        // channel's (z1, z2); coefficients b0 b0 b1 b1 b2 b2 a1 a1 a2 a2.
        for s in 0..<count {
            let section = sections[s]
            let k = section.coefficients
            let p = coefficients + 10 * s
            p[0] = k.b0; p[1] = k.b0; p[2] = k.b1; p[3] = k.b1; p[4] = k.b2
            p[5] = k.b2; p[6] = k.a1; p[7] = k.a1; p[8] = k.a2; p[9] = k.a2
            let q = laneCoefficients + 10 * (s >> 1) + (s & 1)
            q[0] = k.b0; q[2] = k.b1; q[4] = k.b2; q[6] = k.a1; q[8] = k.a2
            let z = state + 2 * channels * s
            for c in 0..<channels {
                let z1 = section.state[2 * c], z2 = section.state[2 * c + 1]
                if c < paired {
                    z[2 * (c & ~1) + (c & 1)] = z1
                    z[2 * (c & ~1) + 2 + (c & 1)] = z2
                } else {
                    z[2 * c] = z1
                    z[2 * c + 1] = z2
                }
            }
        }
        if count & 1 == 1 {
            // The odd channel's wavefront pads the last pair with a section that outputs 0.
            let q = laneCoefficients + 10 * (count >> 1) + 1
            q[0] = 0; q[2] = 0; q[4] = 0; q[6] = 0; q[8] = 0
        }
        var c = 0
        while c < paired {
            if frameCount >= count && count > 1 {
                pairWavefront(count: count, x0: buffers[c], x1: buffers[c + 1], frameCount: frameCount,
                              coefficients: coefficients, state: state + 2 * c, stateStride: 2 * channels,
                              inFlight: inFlight, vectorScratch: vectorScratch)
            } else {
                pairFrameByFrame(count: count, x0: buffers[c], x1: buffers[c + 1], frameCount: frameCount,
                                 coefficients: coefficients, state: state + 2 * c, stateStride: 2 * channels)
            }
            c += 2
        }
        if c < channels {
            let x0 = buffers[c]
            if frameCount >= count && count > 1 {
                for s in 0..<count {
                    let z = state + 2 * (channels * s + c), l = laneState + 4 * (s >> 1) + (s & 1)
                    l[0] = z[0]; l[2] = z[1]
                }
                if count & 1 == 1 { let l = laneState + 4 * (count >> 1) + 1; l[0] = 0; l[2] = 0 }
                singleWavefront(count: count, x: x0, frameCount: frameCount, coefficients: laneCoefficients,
                                state: laneState, inFlight: laneInFlight, vectorScratch: vectorScratch)
                for s in 0..<count {
                    let z = state + 2 * (channels * s + c), l = laneState + 4 * (s >> 1) + (s & 1)
                    z[0] = l[0]; z[1] = l[2]
                }
            } else {
                for i in 0..<frameCount {
                    var a = Double(x0[i])
                    for s in 0..<count {
                        let p = coefficients + 10 * s
                        let k = BiquadCoefficients(b0: p[0], b1: p[2], b2: p[4], a1: p[6], a2: p[8])
                        let z = state + 2 * (channels * s + c)
                        var z1 = z[0], z2 = z[1]
                        a = Double(Float(step(k, a, &z1, &z2)))
                        z[0] = z1; z[1] = z2
                    }
                    x0[i] = Float(a)
                }
            }
        }
        for s in 0..<count {
            let section = sections[s]
            let z = state + 2 * channels * s
            for c in 0..<channels {
                if c < paired {
                    section.state[2 * c] = z[2 * (c & ~1) + (c & 1)]
                    section.state[2 * c + 1] = z[2 * (c & ~1) + 2 + (c & 1)]
                } else {
                    section.state[2 * c] = z[2 * c]
                    section.state[2 * c + 1] = z[2 * c + 1]
                }
            }
        }
    }

    /// ``step(_:_:_:_:)`` in both lanes: `p` points at b0 b0 b1 b1 b2 b2 a1 a1 a2 a2, `z` at
    /// z1 z1 z2 z2 (updated). Returns the unrounded output.
    @inline(__always)
    static func stepLanes(_ p: UnsafeRawPointer, _ z: UnsafeMutableRawPointer, _ v: SIMD2<Double>) -> SIMD2<Double> {
        let b0 = p.loadUnaligned(as: SIMD2<Double>.self)
        let b1 = p.loadUnaligned(fromByteOffset: 16, as: SIMD2<Double>.self)
        let b2 = p.loadUnaligned(fromByteOffset: 32, as: SIMD2<Double>.self)
        let a1 = p.loadUnaligned(fromByteOffset: 48, as: SIMD2<Double>.self)
        let a2 = p.loadUnaligned(fromByteOffset: 64, as: SIMD2<Double>.self)
        var z1 = z.loadUnaligned(as: SIMD2<Double>.self)
        var z2 = z.loadUnaligned(fromByteOffset: 16, as: SIMD2<Double>.self)
        let y = b0 * v + z1
        z1 = b1 * v - a1 * y + z2
        z2 = b2 * v - a2 * y
        let tiny = SIMD2<Double>(repeating: 1e-200)
        z1.replace(with: 0, where: (z1 .< tiny) .& (z1 .> -tiny))
        z2.replace(with: 0, where: (z2 .< tiny) .& (z2 .> -tiny))
        z.storeBytes(of: z1, as: SIMD2<Double>.self)
        z.storeBytes(of: z2, toByteOffset: 16, as: SIMD2<Double>.self)
        return y
    }

    /// A value rounded to Float, as it passes from one section to the next.
    @inline(__always)
    static func rounded(_ y: SIMD2<Double>) -> SIMD2<Double> { SIMD2<Double>(SIMD2<Float>(y)) }

    /// One section of a channel pair on frames `range` of the buffers (`z`: its z1 z1 z2 z2).
    @inline(__always)
    static func pairSection(_ p: UnsafeRawPointer, _ z: UnsafeMutableRawPointer, _ x0: UnsafeMutablePointer<Float>,
                            _ x1: UnsafeMutablePointer<Float>, _ range: Range<Int>) {
        for f in range {
            let y = SIMD2<Float>(stepLanes(p, z, SIMD2<Double>(Double(x0[f]), Double(x1[f]))))
            x0[f] = y[0]
            x1[f] = y[1]
        }
    }

    /// A channel pair through `count` sections, frame by frame (see ``processSteadyCascade``).
    static func pairFrameByFrame(count: Int, x0: UnsafeMutablePointer<Float>, x1: UnsafeMutablePointer<Float>,
                                 frameCount: Int, coefficients: UnsafeMutablePointer<Double>,
                                 state: UnsafeMutablePointer<Double>, stateStride: Int) {
        for i in 0..<frameCount {
            var v = SIMD2<Double>(Double(x0[i]), Double(x1[i]))
            for s in 0..<count {
                v = rounded(stepLanes(coefficients + 10 &* s, state + stateStride &* s, v))
            }
            x0[i] = Float(v[0])
            x1[i] = Float(v[1])
        }
    }

    /// A channel pair through `count` (at least 2) sections as a wavefront over `frameCount` (at
    /// least `count`) frames (see ``processSteadyCascade``). `inFlight` holds a SIMD2 per section:
    /// the rounded value section `s - 1` gave at the last step, the one section `s` takes next.
    static func pairWavefront(count: Int, x0: UnsafeMutablePointer<Float>, x1: UnsafeMutablePointer<Float>,
                              frameCount: Int, coefficients: UnsafeMutablePointer<Double>,
                              state: UnsafeMutablePointer<Double>, stateStride: Int,
                              inFlight: UnsafeMutablePointer<Double>, vectorScratch: UnsafeMutablePointer<Double>) {
        let last = count &- 1
        // Entering: section s filters frames 0 ..< count - 1 - s, in section order.
        for s in 0..<last {
            pairSection(coefficients + 10 &* s, state + stateStride &* s, x0, x1, 0..<(last &- s))
        }
        // What each section takes at the first full step: frame count - 1 - s of section s - 1.
        let flight = UnsafeMutableRawPointer(inFlight)
        for s in 1..<count {
            flight.storeBytes(of: SIMD2<Double>(Double(x0[last &- s]), Double(x1[last &- s])),
                              toByteOffset: 16 &* s, as: SIMD2<Double>.self)
        }
        let lastP = UnsafeRawPointer(coefficients + 10 &* last), lastZ = UnsafeMutableRawPointer(state + stateStride &* last)
        let out0 = x0 - last, out1 = x1 - last
        if wavefrontAVX2 {
            ag_biquad_pair_wavefront_avx2(Int32(count), x0, x1, Int32(last), Int32(frameCount), coefficients, state,
                                          stateStride, inFlight, vectorScratch)
        } else {
            for t in last..<frameCount {
                // The last section first (its input is overwritten below), then down to the first.
                let y = SIMD2<Float>(stepLanes(lastP, lastZ, flight.load(fromByteOffset: 16 &* last, as: SIMD2<Double>.self)))
                out0[t] = y[0]
                out1[t] = y[1]
                var s = last &- 1
                while s > 0 {
                    let v = flight.load(fromByteOffset: 16 &* s, as: SIMD2<Double>.self)
                    let r = rounded(stepLanes(coefficients + 10 &* s, state + stateStride &* s, v))
                    flight.storeBytes(of: r, toByteOffset: 16 &* (s &+ 1), as: SIMD2<Double>.self)
                    s &-= 1
                }
                let r = rounded(stepLanes(coefficients, state, SIMD2<Double>(Double(x0[t]), Double(x1[t]))))
                flight.storeBytes(of: r, toByteOffset: 16, as: SIMD2<Double>.self)
            }
        }
        // Leaving: the values in flight back to the frames they belong to, then section s filters
        // frames frameCount - s ..< frameCount, in section order.
        for s in 1..<count {
            let v = SIMD2<Float>(flight.load(fromByteOffset: 16 &* s, as: SIMD2<Double>.self))
            x0[frameCount &- s] = v[0]
            x1[frameCount &- s] = v[1]
        }
        for s in 1..<count {
            pairSection(coefficients + 10 &* s, state + stateStride &* s, x0, x1, (frameCount &- s)..<frameCount)
        }
    }

    /// One channel through `count` (at least 2) sections as a wavefront over `frameCount` (at least
    /// `count`) frames, sections `2j` and `2j + 1` in the lanes of pair `j` (see
    /// ``processSteadyCascade``). `coefficients` and `state` are per pair (b0 b0 b1 b1 … a2 a2,
    /// z1 z1 z2 z2; an odd count pads the last pair with a section of zero coefficients);
    /// `inFlight` holds per section lane the rounded value it gave at the last step.
    static func singleWavefront(count: Int, x: UnsafeMutablePointer<Float>, frameCount: Int,
                                coefficients: UnsafeMutablePointer<Double>, state: UnsafeMutablePointer<Double>,
                                inFlight: UnsafeMutablePointer<Double>, vectorScratch: UnsafeMutablePointer<Double>) {
        if wavefrontAVX2 && singleWavefrontAVX2 {
            // The whole block, entry and exit steps included (only the sections with frames run there).
            ag_biquad_single_wavefront_avx2(Int32(count), x, Int32(frameCount), coefficients, state, vectorScratch)
            return
        }
        let last = count &- 1, pairs = (count &+ 1) >> 1
        /// Section `s` alone on frames `range` (its lane of the pair's coefficients and state).
        func section(_ s: Int, _ range: Range<Int>) {
            let pair: Int = s >> 1, lane: Int = s & 1
            let p = coefficients + (10 &* pair &+ lane), z = state + (4 &* pair &+ lane)
            let k = BiquadCoefficients(b0: p[0], b1: p[2], b2: p[4], a1: p[6], a2: p[8])
            var z1 = z[0], z2 = z[2]
            for f in range { x[f] = Float(step(k, Double(x[f]), &z1, &z2)) }
            z[0] = z1
            z[2] = z2
        }
        for s in 0..<last { section(s, 0..<(last &- s)) }
        // In flight at the first full step: section q gave frame count - 2 - q.
        inFlight.update(repeating: 0, count: 2 &* pairs)
        for q in 0..<last { inFlight[q] = Double(x[last &- 1 &- q]) }
        let flight = UnsafeMutableRawPointer(inFlight)
        let out = x - last
        for t in last..<frameCount {
            // Pair j takes (lane 2j - 1, lane 2j) of the last step; the first takes the new frame.
            var before = SIMD2<Double>(0, Double(x[t]))
            for j in 0..<pairs {
                let old = flight.load(fromByteOffset: 16 &* j, as: SIMD2<Double>.self)
                let v = SIMD2<Double>(before[1], old[0])
                let r = rounded(stepLanes(coefficients + 10 &* j, state + 4 &* j, v))
                flight.storeBytes(of: r, toByteOffset: 16 &* j, as: SIMD2<Double>.self)
                before = old
            }
            out[t] = Float(inFlight[last])
        }
        for q in 0..<last { x[frameCount &- 1 &- q] = Float(inFlight[q]) }
        for s in 1..<count { section(s, (frameCount &- s)..<frameCount) }
    }

    /// One channel's run during a bypass crossfade.
    @inline(__always)
    private func fadeRun(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int,
                         z: UnsafeMutablePointer<Double>) {
        let k = coefficients
        var z1 = z[0], z2 = z[1]
        for i in 0..<count {
            let xi = Double(x[i])
            let yi = Self.step(k, xi, &z1, &z2)
            let left = max(0, bypassRemaining - i)
            // Fraction of the filtered signal: fades to 0 toward bypass, to 1 away from it.
            let fadeFraction = Double(left) / Double(glideFrames)
            let wet = band.bypass ? fadeFraction : 1 - fadeFraction
            y[i] = Float(wet * yi + (1 - wet) * xi)
        }
        z[0] = z1
        z[1] = z2
    }
}
