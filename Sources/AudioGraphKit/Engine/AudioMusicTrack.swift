// One track of an AudioSequencer (cf. AVMusicTrack): where its events go, mute/solo, offset and loop.
import AudioGraphNodes
import Foundation

/// A time in beats (cf. `AVMusicTimeStamp`).
public typealias MusicTimeStamp = Double

/// A range of beats (cf. `AVBeatRange`).
public struct BeatRange: Hashable, Sendable {
    /// The first beat.
    public var start: MusicTimeStamp
    /// The length in beats.
    public var length: MusicTimeStamp
    public init(start: MusicTimeStamp, length: MusicTimeStamp) {
        self.start = start
        self.length = length
    }
}

/// A beat range (cf. `AVMakeBeatRange`).
public func MakeBeatRange(_ startBeat: MusicTimeStamp, _ lengthInBeats: MusicTimeStamp) -> BeatRange {
    BeatRange(start: startBeat, length: lengthInBeats)
}

/// Loop counts of a track (cf. `AVMusicTrackLoopCount`).
public enum MusicTrackLoopCount: Int, Sendable {
    /// Loop until the sequence stops.
    case forever = -1
}

/// The mechanical translation's name for ``AudioMusicTrack`` (`AVMusicTrack` without its prefix).
public typealias MusicTrack = AudioMusicTrack

/// One track of an ``AudioSequencer`` (cf. `AVMusicTrack`): its events play into
/// ``destinationAudioUnit`` (nil: the engine's first attached MIDI instrument, as Apple's
/// sequencer does). ``isMuted``, ``isSoloed`` apply at once while playing (a silenced track
/// sends no note-ons; its note-offs still go). ``offsetTime``, ``loopRange``,
/// ``isLoopingEnabled`` and ``numberOfLoops`` apply at the next ``AudioSequencer/prepareToPlay()``
/// or start. An endless loop is written out for ``MIDIFile/maximumLoopedSeconds`` (an hour).
///
/// Thread safety: the sequencer's (one control thread at a time).
public final class AudioMusicTrack: @unchecked Sendable {
    /// The sequencer the track belongs to.
    weak var sequencer: AudioSequencer?
    /// The track's index in the MIDI file (-1: the tempo track).
    let index: Int
    /// The schedule last made (nil before preparing, and for the tempo track).
    var schedule: MIDITrackSchedule?

    init(sequencer: AudioSequencer, index: Int) {
        self.sequencer = sequencer
        self.index = index
    }

    /// Where the track's events go: an instrument (``AudioUnitSampler``, ``AudioUnitLV2``); nil:
    /// the engine's first attached instrument. Takes effect at once (re-prepares the sequence).
    public var destinationAudioUnit: AudioUnit? {
        didSet { sequencer?.trackDestinationChanged() }
    }

    /// Whether the track is muted.
    public var isMuted = false {
        didSet { sequencer?.updateSilencing() }
    }

    /// Whether the track is soloed (then only soloed tracks sound).
    public var isSoloed = false {
        didSet { sequencer?.updateSilencing() }
    }

    /// Beats the track is shifted by.
    public var offsetTime: MusicTimeStamp = 0 {
        didSet { sequencer?.placementChanged() }
    }

    /// The region that loops when ``isLoopingEnabled`` (default: the whole track).
    public var loopRange: BeatRange {
        get { storedLoopRange ?? BeatRange(start: 0, length: lengthInBeats) }
        set { storedLoopRange = newValue; sequencer?.placementChanged() }
    }
    private var storedLoopRange: BeatRange?

    /// Whether the track loops.
    public var isLoopingEnabled = false {
        didSet { sequencer?.placementChanged() }
    }

    /// How many times the loop repeats (``MusicTrackLoopCount/forever``: -1).
    public var numberOfLoops: Int = 0 {
        didSet { sequencer?.placementChanged() }
    }

    /// The track's length in beats (its end-of-track event; the tempo track: its last tempo change).
    public var lengthInBeats: MusicTimeStamp {
        guard let file = sequencer?.file else { return 0 }
        if index < 0 { return file.beats(forTick: Double(file.tempoChanges.last?.tick ?? 0)) }
        return file.beats(forTick: Double(file.tracks[index].endTick))
    }

    /// The track's length in seconds through the tempo map.
    public var lengthInSeconds: TimeInterval {
        sequencer?.file?.seconds(forBeats: lengthInBeats) ?? 0
    }

    /// Ticks per beat of the file (cf. `timeResolution`).
    public var timeResolution: Int { sequencer?.file?.ticksPerQuarter ?? 480 }

    /// The placement the schedule is made with.
    var placement: MIDIFile.Placement {
        var p = MIDIFile.Placement()
        p.offsetBeats = offsetTime
        if isLoopingEnabled {
            let r = loopRange
            p.loop = (r.start, r.length)
            p.loopCount = numberOfLoops < 0 ? -1 : max(numberOfLoops, 1)
        }
        return p
    }
}
