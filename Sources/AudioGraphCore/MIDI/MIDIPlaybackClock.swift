// The transport a sequencer's tracks share: playing or not, position, rate, and the frame it started at.
import Synchronization

/// The transport of one sequence, shared by its tracks (``MIDITrackSchedule``) and read by every
/// instrument kernel that plays one of them: whether it plays, the sequence position (seconds)
/// at an anchor frame of the render timeline, and the rate. An event at sequence time `s`
/// sounds at frame `anchorFrame + round((s - anchorSeconds) * sampleRate / rate)`. A start
/// without a frame anchors at the first slice rendered after it (latched once, by whichever
/// kernel renders first, so all tracks agree).
///
/// The control side writes under a sequence lock (an even/odd counter): readers on the render
/// thread retry while a write is under way (a few stores), never lock or wait otherwise.
///
/// Thread safety: ``start(atSeconds:rate:anchorFrame:)``, ``stop()`` and the position queries
/// from control threads (serialised among themselves); ``snapshot(latchingAt:)`` and
/// ``noteRendered(through:)`` from render threads (real-time safe).
package final class MIDIPlaybackClock: @unchecked Sendable {
    /// What a render thread reads for one slice.
    package struct Snapshot: Sendable, Hashable {
        /// Changes with every start, stop, position or rate change.
        package var generation: UInt64
        /// Whether the sequence plays.
        package var isPlaying: Bool
        /// The sequence position (seconds) at ``anchorFrame``.
        package var anchorSeconds: Double
        /// Playback rate (1: as written).
        package var rate: Double
        /// The frame the position applies at.
        package var anchorFrame: Int64

        /// The frame an event at sequence time `seconds` sounds at.
        @inline(__always)
        package func frame(forSeconds seconds: Double, sampleRate: Double) -> Int64 {
            anchorFrame + Int64(((seconds - anchorSeconds) * sampleRate / rate).rounded())
        }
    }

    // MARK: Shared (atomic)
    private let sequence = Atomic<UInt64>(0)
    private let generation = Atomic<UInt64>(0)
    private let playing = Atomic<Bool>(false)
    private let anchorSecondsBits = Atomic<UInt64>(0)
    private let rateBits = Atomic<UInt64>(1.0.bitPattern)
    /// The anchor frame given at start, or `Int64.min`: the first slice rendered (`latched`).
    private let anchorFrame = Atomic<Int64>(.min)
    private let latched = Atomic<Int64>(.min)
    /// The end of the last slice a kernel rendered with this clock.
    private let renderedEnd = Atomic<Int64>(.min)

    // MARK: Control thread only
    private let writers = Mutex<Void>(())

    package init() {}

    // MARK: Control side

    /// Starts (or repositions) playback at sequence time `seconds`, at `rate`, anchored at
    /// graph frame `anchorFrame` (nil: the first slice rendered from now on).
    package func start(atSeconds seconds: Double, rate: Double, anchorFrame frame: Int64?) {
        write(playing: true, seconds: seconds, rate: rate, anchorFrame: frame)
    }

    /// Stops playback at sequence time `seconds` (instruments release the tracks' notes).
    package func stop(atSeconds seconds: Double) {
        let r = Double(bitPattern: rateBits.load(ordering: .relaxed))
        write(playing: false, seconds: seconds, rate: r, anchorFrame: nil)
    }

    private func write(playing isPlaying: Bool, seconds: Double, rate: Double, anchorFrame frame: Int64?) {
        writers.withLock { _ in
            sequence.add(1, ordering: .acquiringAndReleasing)
            generation.add(1, ordering: .releasing)
            playing.store(isPlaying, ordering: .releasing)
            anchorSecondsBits.store(seconds.bitPattern, ordering: .releasing)
            rateBits.store(rate.bitPattern, ordering: .releasing)
            anchorFrame.store(frame ?? .min, ordering: .releasing)
            latched.store(.min, ordering: .releasing)
            sequence.add(1, ordering: .releasing)
        }
    }

    /// The current snapshot, without latching (control side).
    package var current: Snapshot { read() }

    /// The sequence position in seconds now: the anchor's position plus what has been rendered
    /// since, at the rate (the anchor's while nothing has rendered yet, or when stopped).
    package func position(sampleRate: Double) -> Double {
        let s = read()
        guard s.isPlaying, s.anchorFrame != .min else { return s.anchorSeconds }
        let end = renderedEnd.load(ordering: .acquiring)
        guard end != .min, end > s.anchorFrame else { return s.anchorSeconds }
        return s.anchorSeconds + Double(end - s.anchorFrame) / sampleRate * s.rate
    }

    /// The last frame rendered with this clock plus one (nil: none yet).
    package var renderedEndFrame: Int64? {
        let e = renderedEnd.load(ordering: .acquiring)
        return e == .min ? nil : e
    }

    // MARK: Render side

    /// The snapshot for a slice starting at `sampleTime`; a start waiting for its anchor takes
    /// this slice's first frame. Real-time safe.
    @inline(__always)
    package func snapshot(latchingAt sampleTime: Int64) -> Snapshot {
        var s = read()
        if s.isPlaying && s.anchorFrame == .min {
            let (exchanged, original) = latched.compareExchange(expected: .min, desired: sampleTime, ordering: .acquiringAndReleasing)
            s.anchorFrame = exchanged ? sampleTime : original
        }
        return s
    }

    /// Records that a slice ending at `end` (exclusive) was rendered. Real-time safe.
    @inline(__always)
    package func noteRendered(through end: Int64) {
        var current = renderedEnd.load(ordering: .relaxed)
        while current < end {
            let (done, now) = renderedEnd.compareExchange(expected: current, desired: end, ordering: .acquiringAndReleasing)
            if done { break }
            current = now
        }
    }

    @inline(__always)
    private func read() -> Snapshot {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            var s = Snapshot(generation: generation.load(ordering: .acquiring), isPlaying: playing.load(ordering: .acquiring),
                             anchorSeconds: Double(bitPattern: anchorSecondsBits.load(ordering: .acquiring)),
                             rate: Double(bitPattern: rateBits.load(ordering: .acquiring)),
                             anchorFrame: anchorFrame.load(ordering: .acquiring))
            if s.anchorFrame == .min {
                let l = latched.load(ordering: .acquiring)
                if l != .min { s.anchorFrame = l }
            }
            if sequence.load(ordering: .acquiring) == before { return s }
        }
    }
}
