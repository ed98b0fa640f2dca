// Finding, counting and silencing NaN and infinite samples, cheaply enough to run once per slice.

/// Checks for NaN and infinite samples, the tools of the nodes that contain a non-finite value
/// (filters and delays reset their memory, plugins never receive one, the offline renderer
/// counts them).
///
/// ``allFinite(_:count:)`` is one branch-free pass in eight-lane vectors (a finite sample times
/// 0 is 0, NaN or infinity times 0 is NaN), so a node can check a whole slice for the price of
/// a copy and take the slow path only when something is wrong.
///
/// Thread safety: pure functions on the memory given; real-time safe (no allocation, no locks).
package enum NonFiniteSamples {
    /// Whether every one of the `count` samples at `samples` is finite.
    @inline(__always)
    package static func allFinite(_ samples: UnsafePointer<Float>, count: Int) -> Bool {
        var probe = SIMD8<Float>(repeating: 0)
        var i = 0
        let raw = UnsafeRawPointer(samples)
        while i + 8 <= count {
            probe += raw.loadUnaligned(fromByteOffset: i * MemoryLayout<Float>.stride, as: SIMD8<Float>.self) * 0
            i += 8
        }
        var tail: Float = 0
        while i < count {
            tail += samples[i] * 0
            i += 1
        }
        return (probe.sum() + tail).isFinite
    }

    /// The number of NaN or infinite samples among the `count` at `samples`.
    package static func count(_ samples: UnsafePointer<Float>, count: Int) -> Int {
        if allFinite(samples, count: count) { return 0 }
        var found = 0
        for i in 0..<count where !samples[i].isFinite { found += 1 }
        return found
    }

    /// Replaces every NaN or infinite sample among the `count` at `samples` with 0 and returns
    /// how many there were.
    @discardableResult
    package static func replaceWithSilence(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
        if allFinite(samples, count: count) { return 0 }
        var found = 0
        for i in 0..<count where !samples[i].isFinite {
            samples[i] = 0
            found += 1
        }
        return found
    }

    /// Whether every one of the `count` samples at `samples` is finite and within `-limit...limit`.
    package static func allWithin(_ samples: UnsafePointer<Float>, count: Int, limit: Float) -> Bool {
        var peak = SIMD8<Float>(repeating: 0)
        var probe = SIMD8<Float>(repeating: 0)
        var i = 0
        let raw = UnsafeRawPointer(samples)
        while i + 8 <= count {
            let v = raw.loadUnaligned(fromByteOffset: i * MemoryLayout<Float>.stride, as: SIMD8<Float>.self)
            probe += v * 0
            peak = pointwiseMax(peak, pointwiseMax(v, -v))
            i += 8
        }
        var tailPeak: Float = 0, tail: Float = 0
        while i < count {
            tail += samples[i] * 0
            tailPeak = max(tailPeak, abs(samples[i]))
            i += 1
        }
        return (probe.sum() + tail).isFinite && max(peak.max(), tailPeak) <= limit
    }
}
