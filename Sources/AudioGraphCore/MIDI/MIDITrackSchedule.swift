// One track of a sequence ready to play: its events at sequence times in seconds, and its mute state.
import Synchronization

/// One track of a sequence as instrument kernels play it: events sorted by sequence time in
/// seconds (the tempo map already applied; loops already unrolled), the ``clock`` of its
/// sequence, and whether it is silenced (muted, or another track is soloed). Silenced tracks
/// send no note-ons (note-offs and controllers still go, so nothing hangs). Made on a control
/// thread (its storage is allocated once); attached to instruments with ``MIDISequenceSources``.
///
/// Thread safety: immutable but for ``isSilenced`` (atomic, any thread); read on render threads.
package final class MIDITrackSchedule: @unchecked Sendable {
    /// The transport of the sequence the track belongs to.
    package let clock: MIDIPlaybackClock
    /// Number of events.
    package let count: Int
    /// The channels the track's channel messages use (bit n: channel n).
    package let channelMask: UInt16

    // MARK: Storage (fixed at creation)
    private let times: UnsafeMutablePointer<Double>
    private let events: UnsafeMutablePointer<MIDIEvent>
    // MARK: Shared (atomic)
    private let silenced = Atomic<Bool>(false)

    /// A track of `clock`'s sequence: `events` at sequence times `times` (seconds, sorted
    /// ascending; equal times keep their order).
    package init(clock: MIDIPlaybackClock, times: [Double], events: [MIDIEvent]) {
        precondition(times.count == events.count, "MIDITrackSchedule: one time per event")
        self.clock = clock
        count = times.count
        self.times = .allocate(capacity: max(1, count))
        self.times.initialize(from: times, count: count)
        self.events = .allocate(capacity: max(1, count))
        self.events.initialize(from: events, count: count)
        channelMask = events.reduce(0) { m, e in e.kind >= 0x80 && e.kind < 0xF0 ? m | (1 << UInt16(e.channel)) : m }
    }

    deinit {
        times.deinitialize(count: count)
        times.deallocate()
        events.deinitialize(count: count)
        events.deallocate()
    }

    /// Whether the track sends no note-ons (muted, or not soloed while another is). Any thread.
    package var isSilenced: Bool {
        get { silenced.load(ordering: .relaxed) }
        set { silenced.store(newValue, ordering: .relaxed) }
    }

    /// The sequence time of event `i`. Real-time safe.
    @inline(__always)
    package func time(at i: Int) -> Double { times[i] }
    /// Event `i`. Real-time safe.
    @inline(__always)
    package func event(at i: Int) -> MIDIEvent { events[i] }

    /// The index of the first event at or after sequence time `seconds`. Real-time safe.
    package func firstIndex(atOrAfter seconds: Double) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if times[mid] < seconds { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

/// The sequence tracks an instrument node plays, handed to its kernel as a message (set with
/// `node.setProperty(MIDISequenceSources.propertyName, sources)`), with the kernel's per-track
/// playback state allocated here on the control side. The list it replaces comes back in
/// ``KernelMessage/retired`` and is freed off the render thread.
///
/// Thread safety: made on a control thread; its state is used by one kernel on the render thread.
package final class MIDISequenceSources: KernelMessage, @unchecked Sendable {
    /// The property name instrument nodes take a ``MIDISequenceSources`` under.
    package static let propertyName = "midiSequenceSources"
    /// The tracks, in their sequence order (the order events at one frame go out in).
    package let tracks: [MIDITrackSchedule]
    /// `tracks.count` (read on the render thread without touching the array).
    package let trackCount: Int

    // MARK: Render thread only (the owning kernel's playback state per track)
    let trackList: UnsafeMutablePointer<Unmanaged<MIDITrackSchedule>>
    let cursors: UnsafeMutablePointer<Int>
    let generations: UnsafeMutablePointer<UInt64>
    let wasPlaying: UnsafeMutablePointer<Bool>

    /// Sources playing `tracks` (empty: none).
    package init(tracks: [MIDITrackSchedule]) {
        self.tracks = tracks
        trackCount = tracks.count
        let n = max(1, tracks.count)
        trackList = .allocate(capacity: n)
        for (i, t) in tracks.enumerated() { (trackList + i).initialize(to: .passUnretained(t)) }
        cursors = .allocate(capacity: n)
        cursors.initialize(repeating: 0, count: n)
        generations = .allocate(capacity: n)
        generations.initialize(repeating: .max, count: n)
        wasPlaying = .allocate(capacity: n)
        wasPlaying.initialize(repeating: false, count: n)
    }

    deinit {
        trackList.deallocate()
        cursors.deallocate()
        generations.deallocate()
        wasPlaying.deallocate()
    }
}
