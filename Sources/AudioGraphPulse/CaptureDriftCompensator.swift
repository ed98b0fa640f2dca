// Full duplex across two clocks: reads captured frames at a slowly steered rate so the capture ring neither runs dry nor fills up.
import AudioGraphRealtime
import Synchronization

/// Reads a capture ring at the output's pace when the source and the sink run on different
/// clocks (two sound cards; here, two null sinks, one of which runs 300–400 ppm fast under load:
/// `module-null-sink` advances its clock by each rendered chunk's length in whole microseconds,
/// rounded down). Without it, an output that consumes faster than the source delivers drains the
/// capture ring by that drift (376 ppm: 18 frames a second, 22 ms a minute at 48 kHz), and no
/// margin avoids the capture underruns that follow; a source faster than the sink fills it.
///
/// Each output frame takes `step` input frames (``step``: 1 exactly until a correction is
/// needed); a fractional position between input frames is interpolated with a 4-point cubic
/// (Catmull-Rom: at a position on a frame it returns that frame exactly, so at `step` 1 the
/// output is the input, bit for bit, two frames later; at 300 Hz its error is below 1.3e-7 of
/// the amplitude, at 1 kHz 1e-5, and the interpolation lies between input frames only while a
/// correction runs). ``steer(lowWater:deadband:)`` is a proportional-integral controller on the
/// ring's low-water fill against the level it had in the first second: called once per window
/// (a quarter of a second), it keeps `step` within ``maximumCorrection`` of 1, and leaves it
/// alone while the error stays within the deadband, so a source and sink on one clock keep
/// `step` at exactly 1.
///
/// Thread safety: render thread only (one consumer of the ring), real-time safe: the work buffer
/// is allocated in `init`; `read` and `steer` take no lock and allocate nothing.
/// ``correctionPartsPerMillion`` may be read from any thread.
package final class CaptureDriftCompensator: @unchecked Sendable {
    /// The largest correction of the rate, either way (3000 ppm; drifts between real sound cards
    /// are tens to hundreds of ppm).
    package static let maximumCorrection = 0.003
    /// Proportional gain: `step` moves by this much per second of low-water error (0.3: an error
    /// of 1 ms corrects at 300 ppm, about 3 s to close it).
    package static let proportionalGain = 0.3
    /// Integral gain, per window and second of error: what learns a steady
    /// drift (400 ppm within about 10 s).
    package static let integralGain = 0.01
    /// Windows whose low waters are compared (the highest counts): 4 quarter seconds.
    package static let lowWaterWindows = 4

    // MARK: Immutable after init
    private let channels: Int
    private let maximumFrames: Int
    private let sampleRate: Double
    /// Interleaved: the frames carried from the last read (3 or 4) followed by the frames read now.
    private let work: UnsafeMutablePointer<Float>
    private let workFrames: Int

    // MARK: Render thread only
    private var held = 3
    /// Where the next output frame lies in `work`, in frames (≥ 1: one frame of history before it).
    private var position = 1.0
    /// Input frames each output frame takes.
    private(set) package var step = 1.0
    private var integral = 0.0
    /// Whether an error beyond the deadband has been seen since `reset()`.
    private var engaged = false
    /// The fill level steered to: the first level seen after `reset()` (nil: not yet).
    private var target: Int?
    /// The last ``lowWaterWindows`` low waters, oldest first (Int.min: none yet).
    private var lowWaters = (Int.min, Int.min, Int.min, Int.min)

    // MARK: Shared (atomic)
    private let correction = Atomic<Int>(0)

    /// A compensator for reads of at most `maximumFrames` frames of `channels` interleaved channels.
    package init(channels: Int, maximumFrames: Int, sampleRate: Int) {
        self.channels = channels
        self.maximumFrames = maximumFrames
        self.sampleRate = Double(sampleRate)
        workFrames = maximumFrames + Int((Double(maximumFrames) * Self.maximumCorrection).rounded(.up)) + 8
        work = .allocate(capacity: workFrames * channels)
        work.initialize(repeating: 0, count: workFrames * channels)
    }

    deinit { work.deallocate() }

    /// The current correction, parts per million: negative when the source is slower than the
    /// sink (each output frame takes less than one input frame). Any thread.
    package var correctionPartsPerMillion: Int { correction.load(ordering: .relaxed) }

    /// Starts afresh (history silent, `step` 1): at the start of a duplex run. Render thread.
    package func reset() {
        work.update(repeating: 0, count: 4 * channels)
        held = 3
        position = 1
        step = 1
        integral = 0
        engaged = false
        target = nil
        forgetLowWaters()
        correction.store(0, ordering: .relaxed)
    }

    /// Forgets the low waters seen (after frames were dropped: they no longer tell the fill),
    /// keeping the target. Render thread.
    package func forgetLowWaters() {
        lowWaters = (Int.min, Int.min, Int.min, Int.min)
    }

    /// Fills `frames` frames (at most `maximumFrames`) of each of the `channels` buffers from
    /// `ring`, taking about `frames × step` input frames. Returns false when the ring held fewer
    /// than needed (the missing input was silence: an underrun). Render thread; real-time safe.
    package func read(from ring: RingBuffer, frames: Int, into out: UnsafePointer<UnsafeMutablePointer<Float>>) -> Bool {
        let frames = min(frames, maximumFrames)
        guard frames > 0 else { return true }
        let last = position + Double(frames - 1) * step
        let needed = min(Int(last) + 3, workFrames)
        let wanted = max(0, needed - held)
        let got = ring.read(into: work + held * channels, count: wanted * channels) / channels
        if got < wanted { (work + (held + got) * channels).update(repeating: 0, count: (wanted - got) * channels) }
        var x = position
        for j in 0..<frames {
            let i = Int(x)
            let t = Float(x - Double(i))
            let base = (i - 1) * channels
            for c in 0..<channels {
                let p0 = work[base + c], p1 = work[base + channels + c]
                let p2 = work[base + 2 * channels + c], p3 = work[base + 3 * channels + c]
                out[c][j] = p1 + 0.5 * t * (p2 - p0 + t * (2 * p0 - 5 * p1 + 4 * p2 - p3 + t * (3 * (p1 - p2) + p3 - p0)))
            }
            x += step
        }
        // Keep from one frame before the next position on (3 or 4 frames).
        let next = position + Double(frames) * step
        let keepFrom = Int(next) - 1
        held = needed - keepFrom
        work.update(from: work + keepFrom * channels, count: held * channels)
        position = next - Double(keepFrom)
        return got == wanted
    }

    /// One controller update, once per window: `lowWater` is the ring's lowest fill over the
    /// window (frames), `deadband` the error (frames) that must be exceeded once before the
    /// controller engages (until then `step` stays exactly 1; from then on it holds the fill at
    /// its level). The level is the highest of the last ``lowWaterWindows`` low waters (a late
    /// fragment only ever lowers one window's low water, so a single dip is not mistaken for
    /// drift); the target is the first such level after `reset()` (the fill the warm-up left,
    /// seen over a whole second), so only a change of the fill — drift — is steered, never the
    /// difference between the warm-up's short window and a quarter second's. Render thread;
    /// real-time safe.
    package func steer(lowWater: Int, deadband: Int) {
        lowWaters.0 = lowWaters.1
        lowWaters.1 = lowWaters.2
        lowWaters.2 = lowWaters.3
        lowWaters.3 = lowWater
        guard lowWaters.0 != Int.min else { return }  // fewer than four windows seen
        let level = max(max(lowWaters.0, lowWaters.1), max(lowWaters.2, lowWaters.3))
        guard let target else {
            target = level
            return
        }
        let error = level - target
        var proportional = 0.0
        if engaged || abs(error) > deadband {
            // Once drift has shown, the fill is held at the target itself (not at the deadband's
            // edge, which would eat into the margin that late fragments need).
            engaged = true
            let seconds = Double(error) / sampleRate
            integral = min(Self.maximumCorrection, max(-Self.maximumCorrection, integral + Self.integralGain * seconds))
            proportional = Self.proportionalGain * seconds
        }
        step = 1 + min(Self.maximumCorrection, max(-Self.maximumCorrection, integral + proportional))
        correction.store(Int(((step - 1) * 1e6).rounded()), ordering: .relaxed)
    }
}
