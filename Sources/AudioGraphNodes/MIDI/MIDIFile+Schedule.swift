// A MIDI file's track turned into what instruments play: events at sequence seconds, offset and loops applied.
import AudioGraphCore

extension MIDIFile {
    /// How a track is placed in its sequence: shifted by `offsetBeats`, and a loop.
    ///
    /// Thread safety: a value; any thread.
    public struct Placement: Sendable, Hashable {
        /// Beats the track is shifted by (cf. `AVMusicTrack.offsetTime`).
        public var offsetBeats: Double = 0
        /// The loop's start and length in beats (of the track's own time), nil: no loop.
        public var loop: (start: Double, length: Double)? {
            get { loopLength > 0 ? (loopStart, loopLength) : nil }
            set { loopStart = newValue?.start ?? 0; loopLength = newValue?.length ?? 0 }
        }
        /// How many extra times the loop plays; -1 (or less): until ``maximumLoopedSeconds``.
        public var loopCount: Int = 0
        private var loopStart: Double = 0
        private var loopLength: Double = 0
        public init() {}
    }

    /// How far an endless loop is written out (the sequence plays it for an hour).
    public static let maximumLoopedSeconds = 3600.0

    /// Track `index`'s events at sequence times in seconds (tempo map applied after the
    /// placement's offset; a loop's region `[start, start + length)` repeated `loopCount` times,
    /// what follows it shifted behind the repeats; an endless loop's later events never come).
    /// Sorted by time, file order kept within a time.
    public func timedEvents(track index: Int, placement: Placement = Placement()) -> (times: [Double], events: [MIDIEvent]) {
        let track = tracks[index]
        var beatsAndEvents: [(Double, MIDIEvent)] = []
        let beatsOf = track.events.map { (beats(forTick: Double($0.tick)), $0.event) }
        if let loop = placement.loop, loop.length > 0 {
            let loopEnd = loop.start + loop.length
            let forever = placement.loopCount < 0
            var repeats = forever ? Int.max : placement.loopCount
            beatsAndEvents += beatsOf.filter { $0.0 < loopEnd }
            let inLoop = beatsOf.filter { $0.0 >= loop.start && $0.0 < loopEnd }
            var k = 1
            while k <= repeats {
                let shift = Double(k) * loop.length
                if forever && seconds(forBeats: loop.start + shift + placement.offsetBeats) > Self.maximumLoopedSeconds { repeats = k - 1; break }
                if inLoop.isEmpty && forever { break }
                beatsAndEvents += inLoop.map { ($0.0 + shift, $0.1) }
                k += 1
            }
            if !forever {
                beatsAndEvents += beatsOf.filter { $0.0 >= loopEnd }.map { ($0.0 + Double(repeats) * loop.length, $0.1) }
            }
        } else {
            beatsAndEvents = beatsOf
        }
        let timed = beatsAndEvents.enumerated().map { (seconds(forBeats: $0.element.0 + placement.offsetBeats), $0.offset, $0.element.1) }
            .filter { $0.0 >= 0 }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        return (timed.map(\.0), timed.map(\.2))
    }

    /// Track `index` as a schedule of `clock`'s sequence.
    package func schedule(track index: Int, clock: MIDIPlaybackClock, placement: Placement = Placement()) -> MIDITrackSchedule {
        let t = timedEvents(track: index, placement: placement)
        return MIDITrackSchedule(clock: clock, times: t.times, events: t.events)
    }
}
