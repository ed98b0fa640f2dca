// The render side of an instrument's MIDI input: this slice's events, sorted, with their frame offsets.

/// What an instrument kernel asks at the start of each slice: the MIDI events that fall in it,
/// sorted by frame (stable: queued events first, in the order sent, then the sequence tracks
/// in their order), each with its offset in the slice. It drains the node's
/// ``MIDIInputPort`` (events for later frames wait in a sorted pending list; events for frames
/// already past apply at the slice start) and plays the attached ``MIDISequenceSources``
/// (events at ``MIDIPlaybackClock/Snapshot/frame(forSeconds:sampleRate:)``; when a sequence
/// stops or jumps, each of its tracks' channels gets sustain off and all notes off).
///
/// All storage is allocated at creation; ``collect(_:)`` never allocates, locks or waits.
/// Events beyond ``sliceCapacity`` in one slice, or ``pendingCapacity`` waiting, are dropped
/// and counted in the port's ``MIDIInputPort/droppedEventCount``.
///
/// Thread safety: created on a control thread; then render thread only (the owning kernel).
package final class MIDIEventCollector: @unchecked Sendable {
    /// The node's queue.
    package let port: MIDIInputPort
    /// Most events in one slice.
    package let sliceCapacity: Int
    /// Most queued events waiting for a later slice.
    package let pendingCapacity: Int

    // MARK: Render thread only
    private let pending: UnsafeMutablePointer<TimedMIDIEvent>
    private var pendingCount = 0
    private let sliceEvents: UnsafeMutablePointer<MIDIEvent>
    private let sliceOffsets: UnsafeMutablePointer<Int>
    /// Events in the slice collected last.
    public private(set) var count = 0
    private var sources: MIDISequenceSources?
    private var sliceStart: Int64 = 0
    private var sliceEnd: Int64 = 0

    package init(port: MIDIInputPort, sliceCapacity: Int = 4096, pendingCapacity: Int = 4096) {
        self.port = port
        self.sliceCapacity = sliceCapacity
        self.pendingCapacity = pendingCapacity
        pending = .allocate(capacity: pendingCapacity)
        pending.initialize(repeating: TimedMIDIEvent(event: MIDIEvent(status: 0xFE), sampleTime: 0), count: pendingCapacity)
        sliceEvents = .allocate(capacity: sliceCapacity)
        sliceEvents.initialize(repeating: MIDIEvent(status: 0xFE), count: sliceCapacity)
        sliceOffsets = .allocate(capacity: sliceCapacity)
        sliceOffsets.initialize(repeating: 0, count: sliceCapacity)
    }

    deinit {
        pending.deinitialize(count: pendingCapacity)
        pending.deallocate()
        sliceEvents.deinitialize(count: sliceCapacity)
        sliceEvents.deallocate()
        sliceOffsets.deallocate()
    }

    /// Takes `newSources` (from a kernel message) and hands the previous ones back in the
    /// message's `retired`, to be freed off the render thread. Render thread; real-time safe.
    package func install(_ newSources: MIDISequenceSources) {
        newSources.retired = sources
        sources = newSources.tracks.isEmpty ? nil : newSources
    }

    /// The offset (frames from the slice start) of event `i` of the last slice. Real-time safe.
    @inline(__always)
    package func offset(at i: Int) -> Int { sliceOffsets[i] }
    /// Event `i` of the last slice. Real-time safe.
    @inline(__always)
    package func event(at i: Int) -> MIDIEvent { sliceEvents[i] }

    /// Forgets waiting events (a node reset). Render thread; real-time safe.
    package func reset() {
        pendingCount = 0
        port.drain { _ in }
    }

    /// Gathers the events of `context`'s slice; returns their count (read them with
    /// ``offset(at:)`` and ``event(at:)``). Render thread; real-time safe.
    package func collect(_ context: RenderContext) -> Int {
        sliceStart = context.sampleTime
        sliceEnd = context.sampleTime + Int64(context.frameCount)
        count = 0
        // 1. The queue: into the pending list, kept sorted by frame (stable).
        port.drain { timed in
            var t = timed
            if t.sampleTime < sliceStart { t.sampleTime = sliceStart }
            insertPending(t)
        }
        // 2. Pending events due in this slice.
        var due = 0
        while due < pendingCount && pending[due].sampleTime < sliceEnd {
            append(pending[due].event, at: pending[due].sampleTime)
            due += 1
        }
        if due > 0 {
            for i in due..<pendingCount { pending[i - due] = pending[i] }
            pendingCount -= due
        }
        // 3. Sequence tracks.
        if let sources { playSequences(sources, context) }
        // Sort by offset (stable insertion sort: sources arrive mostly sorted).
        if count > 1 {
            for i in 1..<count {
                let o = sliceOffsets[i], e = sliceEvents[i]
                var j = i
                while j > 0 && sliceOffsets[j - 1] > o {
                    sliceOffsets[j] = sliceOffsets[j - 1]
                    sliceEvents[j] = sliceEvents[j - 1]
                    j -= 1
                }
                sliceOffsets[j] = o
                sliceEvents[j] = e
            }
        }
        return count
    }

    @inline(__always)
    private func append(_ event: MIDIEvent, at frame: Int64) {
        guard count < sliceCapacity else { port.countDropped(1); return }
        sliceEvents[count] = event
        sliceOffsets[count] = Int(max(frame, sliceStart) - sliceStart)
        count += 1
    }

    private func insertPending(_ t: TimedMIDIEvent) {
        guard pendingCount < pendingCapacity else { port.countDropped(1); return }
        var j = pendingCount
        while j > 0 && pending[j - 1].sampleTime > t.sampleTime {
            pending[j] = pending[j - 1]
            j -= 1
        }
        pending[j] = t
        pendingCount += 1
    }

    private func playSequences(_ s: MIDISequenceSources, _ context: RenderContext) {
        for k in 0..<s.trackCount {
            let track = s.trackList[k].takeUnretainedValue()
            let snap = track.clock.snapshot(latchingAt: sliceStart)
            if snap.generation != s.generations[k] {
                if s.wasPlaying[k] { releaseNotes(track) }
                s.generations[k] = snap.generation
                s.wasPlaying[k] = snap.isPlaying
                // From the first event not before this slice (a schedule attached while playing
                // starts at its own position, not at the anchor): a binary search half a frame
                // early, then past what rounds before the slice.
                if snap.isPlaying && snap.anchorFrame != .min && sliceStart > snap.anchorFrame {
                    let now = snap.anchorSeconds + Double(sliceStart - snap.anchorFrame) * snap.rate / context.sampleRate
                    var i = track.firstIndex(atOrAfter: now - snap.rate / context.sampleRate)
                    while i < track.count && snap.frame(forSeconds: track.time(at: i), sampleRate: context.sampleRate) < sliceStart { i += 1 }
                    s.cursors[k] = i
                } else {
                    s.cursors[k] = track.firstIndex(atOrAfter: snap.anchorSeconds)
                }
            }
            guard snap.isPlaying else { continue }
            var i = s.cursors[k]
            let silenced = track.isSilenced
            while i < track.count {
                let f = snap.frame(forSeconds: track.time(at: i), sampleRate: context.sampleRate)
                if f >= sliceEnd { break }
                let e = track.event(at: i)
                if !(silenced && e.isNoteOn) { append(e, at: f) }
                i += 1
            }
            s.cursors[k] = i
            track.clock.noteRendered(through: sliceEnd)
        }
    }

    /// Sustain off and all notes off on the track's channels, at the slice start.
    private func releaseNotes(_ track: MIDITrackSchedule) {
        for c in 0..<16 where track.channelMask & (1 << UInt16(c)) != 0 {
            append(.controlChange(channel: UInt8(c), controller: 64, value: 0), at: sliceStart)
            append(.controlChange(channel: UInt8(c), controller: 123, value: 0), at: sliceStart)
        }
    }
}
