// A per-sample linear glide from one value to another over a whole number of frames.

/// A value that moves linearly to a target over a number of frames, evaluated as a pure function
/// of an integer countdown so that the result does not depend on how frames are grouped into
/// calls.
///
/// Sample `i` of the next run (0-based) has the value at countdown `max(0, remaining - 1 - i)`:
/// the first sample after ``set(_:frames:)`` has already moved one step, and the value is exactly
/// the target from the `frames`-th sample on.
///
/// Thread safety: a value type, used by one thread (the render thread); every method is real-time
/// safe.
package struct LinearGlide: Sendable {
    /// Where the current glide started.
    package private(set) var start: Double
    /// Where it ends (the value once settled).
    package private(set) var target: Double
    /// Frames left until the target is reached (0: settled).
    package private(set) var remaining: Int
    /// Length of the current glide in frames.
    package private(set) var frames: Int

    /// A settled glide at `value`.
    package init(_ value: Double) {
        start = value; target = value; remaining = 0; frames = 1
    }

    /// Whether the value is constant (on its target).
    @inline(__always) package var isSettled: Bool { remaining == 0 }

    /// The value at countdown `r` (0: the target).
    @inline(__always) func value(countdown r: Int) -> Double {
        r <= 0 ? target : target + (start - target) * (Double(r) / Double(frames))
    }

    /// The value of sample `i` of the next run.
    @inline(__always) package func value(at i: Int) -> Double {
        value(countdown: remaining - 1 - i)
    }

    /// The value right now (before the next sample).
    @inline(__always) package var current: Double { value(countdown: remaining) }

    /// Glides from the current value to `newTarget` over `frames` frames (0 or less: an exact step).
    /// Setting the current target again does nothing.
    package mutating func set(_ newTarget: Double, frames newFrames: Int) {
        if newTarget == target { return }
        if newFrames <= 0 {
            start = newTarget; target = newTarget; remaining = 0; frames = 1
            return
        }
        start = current
        target = newTarget
        frames = newFrames
        remaining = newFrames
    }

    /// Moves `count` frames on.
    @inline(__always) package mutating func advance(_ count: Int) {
        remaining = max(0, remaining - count)
    }
}
