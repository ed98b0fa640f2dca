// WSOLA time-stretching (waveform-similarity overlap-add, SoX's `tempo` class): the timePitch node's `fastest` mode.
import AudioGraphCore
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Time-stretches by WSOLA (Verhelst and Roelands' waveform-similarity overlap-add, the class of
/// SoX's `tempo` effect): the output is made of segments of the input, ``segment`` frames each,
/// laid ``hop`` frames apart and cross-faded over ``overlap`` frames. Segment `k` is taken near
/// its nominal input position: the one that puts the segment's middle where it belongs, `P_k +
/// (segment / 2) · (rate_k - 1)` with `P_k` the input position of output frame `k · hop`
/// (`P_{k+1} = P_k + hop · rate_k`); within a segment the input plays at rate 1, so an event
/// `u` frames into it lands `|u - segment / 2| · |1 - 1 / rate|` frames off. It is taken at the offset within
/// ±``search`` frames whose first ``overlap`` frames are the most like the end of segment `k-1`
/// (least sum of squared differences over all channels), so the cross-fade joins two similar
/// waveforms. The pitch is kept (the samples are not resampled); material is repeated (rate < 1)
/// or skipped (rate > 1) in whole pieces, which is why a transient can come out up to
/// `search + (segment / 2) · |1 - 1 / rate|` frames from where it belongs (8 + 8 ms at rate
/// 1.25), twice or not at all. About 30 times less work than R3.
///
/// Parameters at 48 kHz: segment 80 ms, overlap 15 ms, search ±8 ms (scaled with the sample
/// rate; the overlap a multiple of 16 frames).
///
/// Deterministic: segment `k`'s rate is the one given for it by ``setRate(_:)`` (the kernel
/// reads `rate` at the output frame where the segment starts), its input is fed in blocks whatever the render slice,
/// and its output waits in a FIFO; so the output does not depend on the slice size.
/// Alignment: segment 0 starts at input frame 0 with no search, so output frame 0 is input
/// frame 0; the stretcher reads ``readAhead`` frames ahead of its output.
///
/// Every buffer is allocated at init; ``feed(_:frameCount:)``, ``makeSegment(rate:)``,
/// ``read(into:at:frameCount:)`` and ``prime()`` neither allocate nor lock (TimePitchRealTimeSafetyTests).
///
/// Thread safety: created and released on a control thread; every other member on the render
/// thread only (one thread at a time), real-time safe.
final class WSOLAStretcher: @unchecked Sendable {
    // MARK: Immutable after init
    let channelCount: Int
    /// Frames per segment.
    let segment: Int
    /// Frames over which consecutive segments are cross-faded (a multiple of 16).
    let overlap: Int
    /// Output frames per segment: `segment - overlap`.
    let hop: Int
    /// The largest distance, in input frames, between a segment's start and its nominal position.
    let search: Int
    /// Frames the input buffer holds per channel.
    private let inputCapacity: Int
    private let input: ChannelBufferStorage
    private let tail: ChannelBufferStorage
    /// The output waiting to be read: room for one read and one segment's hop.
    private let fifo: PlanarFIFO
    /// Cross-fade gains: `fadeIn[i]` for the new segment, `1 - fadeIn[i]` for the previous one's end.
    private let fadeIn: UnsafeMutablePointer<Float>

    // MARK: Render thread only
    /// The input frame (counted from the last prime) at storage index 0, and how many are stored.
    private var base: Int64 = 0
    private var stored = 0
    /// The input position of output frame `k · hop` for the next segment `k` (frames from the last prime).
    private var position = 0.0
    /// The next segment's rate (``setRate(_:)``).
    private var rate = 1.0
    /// Segments made since the last prime.
    private(set) var segmentsMade: Int64 = 0
    /// Frames waiting in the FIFO.
    var level: Int { fifo.level }

    /// A stretcher for `channelCount` channels at `sampleRate` (control thread: allocates).
    /// `maximumOutputPerRead` is the most frames one ``read(into:at:frameCount:)`` asks for;
    /// `maximumFeed` the most frames one ``feed(_:frameCount:)`` brings.
    init(sampleRate: Double, channelCount: Int, maximumOutputPerRead: Int, maximumFeed: Int) {
        self.channelCount = max(1, channelCount)
        let sr = max(1000, sampleRate)
        overlap = max(16, Int((0.015 * sr / 16).rounded()) * 16)
        segment = max(3 * overlap, Int((0.080 * sr).rounded()))
        hop = segment - overlap
        search = max(1, Int((0.008 * sr).rounded()))
        // Before a feed the buffer holds less than one window (segment + 2 * search frames) at
        // or after its start: one window, one feed and one window's worth of not yet dropped frames.
        inputCapacity = 2 * (segment + 2 * search + 1) + maximumFeed
        input = ChannelBufferStorage(channelCount: self.channelCount, capacity: inputCapacity)
        tail = ChannelBufferStorage(channelCount: self.channelCount, capacity: overlap)
        fifo = PlanarFIFO(channelCount: self.channelCount, capacity: maximumOutputPerRead + hop)
        fadeIn = .allocate(capacity: overlap)
        for i in 0..<overlap {
            let x = Double.pi * (Double(i) + 0.5) / Double(overlap)
            fadeIn[i] = Float(0.5 - 0.5 * cos(x))
        }
    }

    deinit { fadeIn.deallocate() }

    /// How far ahead of its output the stretcher reads its input at the start: one segment.
    var readAhead: Int { segment }

    /// Starts over: empties the input buffer and the FIFO; the next segment is segment 0 at
    /// input frame 0 (the next frame fed). Real-time safe.
    func prime() {
        base = 0
        stored = 0
        position = 0
        rate = 1
        segmentsMade = 0
        fifo.removeAll()
    }

    /// Sets the next segment's rate (input frames per output frame), before its input is fed.
    /// Real-time safe.
    @inline(__always)
    func setRate(_ rate: Double) { self.rate = rate }

    /// The next segment's nominal start, rounded: its middle where it belongs (not before the
    /// input's start). It never moves back from one segment to the next, whatever the rates, as
    /// ``hop`` is more than half a segment.
    @inline(__always)
    private var nominal: Int64 { max(0, Int64((position + Double(segment / 2) * (rate - 1)).rounded())) }
    /// The first input frame the next segment may use (its earliest candidate start).
    @inline(__always)
    private var windowStart: Int64 { segmentsMade == 0 ? 0 : max(0, nominal - Int64(search)) }
    /// One past the last input frame the next segment may use.
    @inline(__always)
    private var windowEnd: Int64 { segmentsMade == 0 ? Int64(segment) : nominal + Int64(search + segment) }

    /// Whether the next segment has all the input it needs (else ``feed(_:frameCount:)`` more).
    @inline(__always)
    var hasInputForNextSegment: Bool { base + Int64(stored) >= windowEnd }

    /// Appends the next `frameCount` input frames (at most the `maximumFeed` given at init) of
    /// `channels` (one pointer per channel), keeping only what the next segments may use (at
    /// high rates whole feeds are skipped). Real-time safe.
    func feed(_ channels: UnsafePointer<UnsafePointer<Float>>, frameCount n: Int) {
        let end = base + Int64(stored)
        let start = windowStart
        if start >= end {
            // Nothing stored is needed any more: keep the block from the window's start on.
            let skip = Int(min(Int64(n), start - end))
            base = end + Int64(skip)
            stored = n - skip
            for c in 0..<channelCount {
                input.list.channel(c).update(from: channels[c] + skip, count: n - skip)
            }
            return
        }
        if stored + n > inputCapacity {
            // Drop the frames before the window (rare: about once per buffer's worth of input).
            let drop = Int(start - base)
            for c in 0..<channelCount {
                let p = input.list.channel(c)
                UnsafeMutableRawPointer(p).copyMemory(from: p + drop, byteCount: (stored - drop) * MemoryLayout<Float>.stride)
            }
            base += Int64(drop)
            stored -= drop
        }
        for c in 0..<channelCount {
            (input.list.channel(c) + stored).update(from: channels[c], count: n)
        }
        stored += n
    }

    /// Makes the next segment (``hasInputForNextSegment`` must be true) at the rate set last and
    /// appends its ``hop`` frames to the FIFO. Real-time safe.
    func makeSegment() {
        let w = fifo.reserve(hop)
        let start: Int
        if segmentsMade == 0 {
            start = Int(0 - base)
            for c in 0..<channelCount {
                let x = input.list.channel(c) + start
                (fifo.channel(c) + w).update(from: x, count: hop)
            }
        } else {
            start = bestStart()
            for c in 0..<channelCount {
                let x = input.list.channel(c) + start
                let t = tail.list.channel(c)
                let y = fifo.channel(c) + w
                for i in 0..<overlap { y[i] = t[i] + fadeIn[i] * (x[i] - t[i]) }
                (y + overlap).update(from: x + overlap, count: hop - overlap)
            }
        }
        for c in 0..<channelCount {
            tail.list.channel(c).update(from: input.list.channel(c) + start + hop, count: overlap)
        }
        fifo.didAppend(hop)
        segmentsMade += 1
        position += Double(hop) * rate
    }

    /// The storage index (from ``base``) of the next segment's start: the candidate within
    /// ±``search`` of its nominal position whose first ``overlap`` frames differ least from
    /// the previous segment's end (sum of squares over the channels, `E - 2X`: the candidate's
    /// energy, kept running, less twice its correlation with that end).
    @inline(__always)
    private func bestStart() -> Int {
        let lo = Int(windowStart - base)
        let hi = Int(nominal - base) + search
        var energy = 0.0
        for c in 0..<channelCount {
            let x = input.list.channel(c) + lo
            for i in 0..<overlap { energy += Double(x[i]) * Double(x[i]) }
        }
        var best = lo
        var bestScore = Double.infinity
        for s in lo...hi {
            var correlation: Float = 0
            for c in 0..<channelCount {
                correlation += Self.dot(input.list.channel(c) + s, tail.list.channel(c), count: overlap)
            }
            let score = energy - 2 * Double(correlation)
            if score < bestScore {
                bestScore = score
                best = s
            }
            for c in 0..<channelCount {
                let x = input.list.channel(c)
                let a = Double(x[s + overlap]), b = Double(x[s])
                energy += a * a - b * b
            }
        }
        return best
    }

    /// `Σ a[i]·b[i]` over `count` (a multiple of 16) frames, in two SIMD8 accumulators.
    @inline(__always)
    private static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
        let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
        var s0 = SIMD8<Float>(), s1 = SIMD8<Float>()
        var i = 0
        while i < count {
            let o = i * MemoryLayout<Float>.stride
            s0 += ra.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self) * rb.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            s1 += ra.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self) * rb.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
            i += 16
        }
        return (s0 + s1).sum()
    }

    /// Moves `frameCount` frames (at most ``level``) from the FIFO to `destination`, interleaved
    /// (``channelCount`` floats per frame). Real-time safe.
    @inline(__always)
    func read(interleavedInto destination: UnsafeMutablePointer<Float>, frameCount n: Int) {
        fifo.read(interleavedInto: destination, frameCount: n)
    }

    /// Moves `frameCount` frames (at most ``level``) from the FIFO to `output`'s channels from
    /// frame `offset` on (channels beyond ``channelCount`` are left alone). Real-time safe.
    @inline(__always)
    func read(into output: ChannelBufferList, at offset: Int = 0, frameCount n: Int) {
        fifo.read(into: output, at: offset, frameCount: n)
    }
}
