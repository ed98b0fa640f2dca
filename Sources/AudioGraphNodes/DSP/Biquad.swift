// One equalizer band as a filter section: cookbook biquad, per-channel state, click-free glides.

import Foundation

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
public final class Biquad {

    /// How long a parameter step glides, seconds.
    public static let glideDuration = 0.01
    /// Coefficients are recomputed while gliding at frames that are multiples of this (the grid is
    /// aligned to the absolute frame index, so it does not depend on slice boundaries).
    public static let coefficientUpdateInterval = 1

    // MARK: Fixed at init
    /// Frames per second.
    public let sampleRate: Double
    /// The number of channels ``process`` accepts at most (state is allocated for that many).
    public let maximumChannelCount: Int
    /// Frames a glide lasts (at least 1).
    let glideFrames: Int

    // MARK: Render thread only
    /// The band being approached (the last target set).
    public private(set) var band: EQBand
    /// The coefficients in use.
    public private(set) var coefficients: BiquadCoefficients
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

    /// A section for at most `maximumChannelCount` channels, starting settled on `band`.
    /// Allocates: call on the control thread.
    public init(band: EQBand, sampleRate: Double, maximumChannelCount: Int) {
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
    public func setTarget(_ newBand: EQBand) {
        if newBand == band { return }
        let old = band
        band = newBand
        if newBand.type != old.type {
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
        if newBand.bypass != old.bypass {
            // Reverse the fade from where it is.
            bypassRemaining = glideFrames - bypassRemaining
        }
    }

    /// Clears the filter memory and lands every glide (for a stream restart). Real-time safe.
    public func reset() {
        state.update(repeating: 0, count: 2 * maximumChannelCount)
        land()
        bypassRemaining = 0
    }

    /// Filters `frameCount` frames of each channel; `output` may be the same buffers as `input`.
    ///
    /// - Parameters:
    ///   - input: one pointer per channel (at most ``maximumChannelCount``; extra are ignored).
    ///   - output: one pointer per channel, as many as `input`.
    ///   - startFrame: the absolute index of the first frame (the coefficient-update grid).
    ///
    /// Real-time safe.
    public func process(input: UnsafeBufferPointer<UnsafePointer<Float>>,
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
            for c in 0..<channels {
                filterRun(input[c] + done, output[c] + done, count: run, z: state + 2 * c)
            }
            glideRemaining = max(0, glideRemaining - run)
            bypassRemaining = max(0, bypassRemaining - run)
            done += run
        }
    }

    /// Filters one channel's run with the current coefficients and the bypass crossfade.
    @inline(__always)
    private func filterRun(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int,
                           z: UnsafeMutablePointer<Double>) {
        let k = coefficients
        var z1 = z[0], z2 = z[1]
        let fading = bypassRemaining > 0
        let settledBypass = band.bypass && !fading
        for i in 0..<count {
            let xi = Double(x[i])
            let yi = k.b0 * xi + z1
            z1 = k.b1 * xi - k.a1 * yi + z2
            z2 = k.b2 * xi - k.a2 * yi
            // Flush values far below Float's range before they become subnormal (slow).
            if abs(z1) < 1e-200 { z1 = 0 }
            if abs(z2) < 1e-200 { z2 = 0 }
            if settledBypass {
                y[i] = x[i]
            } else if fading {
                let left = max(0, bypassRemaining - i)
                // Fraction of the filtered signal: fades to 0 toward bypass, to 1 away from it.
                let fadeFraction = Double(left) / Double(glideFrames)
                let wet = band.bypass ? fadeFraction : 1 - fadeFraction
                y[i] = Float(wet * yi + (1 - wet) * xi)
            } else {
                y[i] = Float(yi)
            }
        }
        z[0] = z1
        z[1] = z2
    }
}
