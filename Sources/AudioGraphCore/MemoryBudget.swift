// How much memory a graph's buffers may take, and what the large ones need, checked before building.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory rules checked up front: the loader computes what the big buffers will take at the
/// resolved rates and channel counts — each output bus's slice buffer, each delay line — and
/// refuses a graph that would not fit, naming the node (or the count) and the limit, instead of
/// letting the build allocate and die.
///
/// Thread safety: stateless; reads `sysconf` once per call. Any thread.
package enum MemoryBudget {
    /// The longest delay a delay line holds, seconds (the delay node's `delayTime` maximum).
    package static let maximumDelayTime = 2.0

    /// Frames in a delay line's ring at `sampleRate`: the power of two that holds
    /// ``maximumDelayTime`` plus three frames of interpolation.
    package static func delayLineCapacity(sampleRate: Double) -> Int {
        let needed = FrameCount.int(maximumDelayTime * sampleRate, rounding: .up) + 3
        var capacity = 1
        while capacity < needed && capacity < 1 << 40 { capacity <<= 1 }
        return capacity
    }

    /// Bytes a delay line takes for `channels` at `sampleRate` (input and output history).
    package static func delayLineBytes(sampleRate: Double, channels: Int) -> Int64 {
        let frames = Int64(delayLineCapacity(sampleRate: sampleRate))
        let (bytes, overflow) = frames.multipliedReportingOverflow(by: 2 * 4 * Int64(max(1, channels)))
        return overflow ? .max : bytes
    }

    /// Bytes of one output bus's buffer: `channels` × `frames` floats.
    package static func sliceBytes(channels: Int, frames: Int) -> Int64 {
        Int64(max(1, channels)) * Int64(max(1, frames)) * 4
    }

    /// `a + b`, saturating at `Int64.max`.
    package static func adding(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    /// The machine's physical memory, bytes (nil when the system does not say).
    package static var physicalMemory: Int64? {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return nil }
        return Int64(pages).multipliedReportingOverflow(by: Int64(size)).partialValue
    }

    /// The most one graph's delay lines may take together: half the physical memory (4 GiB when
    /// the system does not say).
    package static var limit: Int64 { (physicalMemory ?? 8 << 30) / 2 }

    /// `bytes` as a short human figure ("3.2 GB", "512 MB").
    package static func describe(_ bytes: Int64) -> String {
        let gb = Double(bytes) / 1e9
        if gb >= 1 { return String(Double(Int((gb * 10).rounded())) / 10) + " GB" }
        return String(Int((Double(bytes) / 1e6).rounded(.up))) + " MB"
    }
}
