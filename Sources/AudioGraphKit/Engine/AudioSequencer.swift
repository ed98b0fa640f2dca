// The MIDI file player of an engine (cf. AVAudioSequencer): tracks into instruments, sample-exact on the render timeline.
import AudioGraphNodes
import Foundation

/// Plays a Standard MIDI File (format 0 or 1) into an engine's instruments (cf.
/// `AVAudioSequencer`). Each track plays into its ``AudioMusicTrack/destinationAudioUnit``
/// (default: the engine's first attached ``AudioUnitMIDIInstrument``).
///
/// Timing: the file's ticks go through its tempo map to seconds; a sequence started at position
/// `p` with rate `r` puts an event at sequence time `s` at frame `a + round((s - p) * rate / r)`
/// of the engine's render timeline, `a` being the first frame of the first slice rendered after
/// ``start()`` (live), or the manual-rendering sample time at ``start()`` (manual rendering:
/// exact, so offline renders are the same whatever the slice sizes). The instruments' kernels
/// read the events on the render thread from preallocated schedules (``MIDITrackSchedule``) and
/// apply them at their frames; nothing crosses a queue while playing.
///
/// Thread safety: use one sequencer from one control thread at a time; never blocks the render thread.
public final class AudioSequencer: @unchecked Sendable {
    // MARK: Control thread only
    private weak var engine: AudioEngine?
    /// The file loaded (nil: none).
    private(set) var file: MIDIFile?
    /// The transport the schedules share.
    private let clock = MIDIPlaybackClock()
    private var stoppedPosition: TimeInterval = 0
    private var prepared = false
    /// The instruments the last prepare attached schedules to.
    private var attachedTo: [SequenceDestination] = []

    /// A sequencer with no engine (cf. `init()`): it can load files and convert times, not play.
    public init() {}

    /// A sequencer playing into `engine`'s instruments (cf. `init(audioEngine:)`).
    public init(audioEngine engine: AudioEngine) {
        self.engine = engine
    }

    /// The file's tracks.
    public private(set) var tracks: [AudioMusicTrack] = []
    /// The tempo track (the file's tempo map; it plays no events).
    public private(set) lazy var tempoTrack = AudioMusicTrack(sequencer: self, index: -1)

    /// Loads a Standard MIDI File (cf. `load(from:options:)`); a sequence that was playing stops.
    /// - Throws: ``MIDIFileError`` naming the file and byte.
    public func load(from fileURL: URL, options: MusicSequenceLoadOptions = []) throws {
        let f = try MIDIFile(contentsOf: fileURL.path)
        install(options.contains(.smf_ChannelsToTracks) ? f.channelsToTracks() : f)
    }

    /// Loads a Standard MIDI File from memory (cf. `load(from:options:)`).
    /// - Throws: ``MIDIFileError`` (the file is called "data").
    public func load(from data: Data, options: MusicSequenceLoadOptions = []) throws {
        let f = try MIDIFile(data: data, name: "data")
        install(options.contains(.smf_ChannelsToTracks) ? f.channelsToTracks() : f)
    }

    private func install(_ f: MIDIFile) {
        if isPlaying { stop() }
        detachSchedules()
        file = f
        tracks = f.tracks.indices.map { AudioMusicTrack(sequencer: self, index: $0) }
        stoppedPosition = 0
        prepared = false
    }

    // MARK: Time

    /// The sequence's length in beats: its longest track's, offsets included.
    public var lengthInBeats: MusicTimeStamp { tracks.map { $0.lengthInBeats + $0.offsetTime }.max() ?? 0 }
    /// The sequence's length in seconds.
    public var lengthInSeconds: TimeInterval { seconds(forBeats: lengthInBeats) }

    /// Seconds at `beats` through the file's tempo map (120 BPM without a file).
    public func seconds(forBeats beats: MusicTimeStamp) -> TimeInterval {
        file?.seconds(forBeats: beats) ?? beats / 2
    }

    /// Beats at `seconds` through the file's tempo map.
    public func beats(forSeconds seconds: TimeInterval) -> MusicTimeStamp {
        file?.beats(forSeconds: seconds) ?? seconds * 2
    }

    /// The playback position in seconds; setting it while playing jumps there at the next slice.
    public var currentPositionInSeconds: TimeInterval {
        get { isPlaying ? clock.position(sampleRate: renderRate) : stoppedPosition }
        set {
            let p = max(0, newValue.isFinite ? newValue : 0)
            if isPlaying { clock.start(atSeconds: p, rate: Double(rate), anchorFrame: anchorFrame()) } else { stoppedPosition = p }
        }
    }

    /// The playback position in beats.
    public var currentPositionInBeats: TimeInterval {
        get { beats(forSeconds: currentPositionInSeconds) }
        set { currentPositionInSeconds = seconds(forBeats: newValue) }
    }

    /// The playback rate (1: as written; 0.5 half speed); a change while playing applies from the current position.
    public var rate: Float = 1 {
        didSet {
            if !(rate > 0) || !rate.isFinite { rate = oldValue; return }
            if isPlaying { clock.start(atSeconds: clock.position(sampleRate: renderRate), rate: Double(rate), anchorFrame: anchorFrame()) }
        }
    }

    /// Whether the sequence plays.
    public var isPlaying: Bool { clock.current.isPlaying }

    // MARK: Transport

    /// Makes the tracks' schedules and hands them to their instruments (also done by ``start()``).
    public func prepareToPlay() {
        guard let file, let engine else { return }
        detachSchedules()
        var byInstrument: [ObjectIdentifier: (SequenceDestination, [MIDITrackSchedule])] = [:]
        let fallback = engine.withLock { engine.attached.first { $0 is SequenceDestination } } as? SequenceDestination
        for track in tracks {
            let schedule = file.schedule(track: track.index, clock: clock, placement: track.placement)
            track.schedule = schedule
            guard let dest = (track.destinationAudioUnit as? SequenceDestination) ?? fallback else { continue }
            byInstrument[ObjectIdentifier(dest), default: (dest, [])].1.append(schedule)
        }
        updateSilencing()
        for (_, (instrument, schedules)) in byInstrument {
            instrument.attachSequence(schedules, clock: clock)
            attachedTo.append(instrument)
        }
        prepared = true
    }

    /// Starts playing from ``currentPositionInSeconds`` (cf. `start()`).
    /// - Throws: ``AudioEngineError/invalidState(call:reason:code:)`` when there is no engine,
    ///   no file, or the engine is not running.
    public func start() throws {
        guard let engine else {
            throw AudioEngineError.invalidState(call: "AudioSequencer.start()", reason: "the sequencer has no engine", code: -10867)
        }
        guard file != nil else {
            throw AudioEngineError.invalidState(call: "AudioSequencer.start()", reason: "no MIDI file is loaded", code: -10867)
        }
        guard engine.isRunning else {
            throw AudioEngineError.invalidState(call: "AudioSequencer.start()", reason: "the engine is not running", code: -10867)
        }
        if !prepared { prepareToPlay() }
        guard !isPlaying else { return }
        clock.start(atSeconds: stoppedPosition, rate: Double(rate), anchorFrame: anchorFrame())
    }

    /// Stops playing (the instruments release the tracks' notes); the position stays (cf. `stop()`).
    public func stop() {
        guard isPlaying else { return }
        stoppedPosition = clock.position(sampleRate: renderRate)
        clock.stop(atSeconds: stoppedPosition)
    }

    // MARK: Internals

    /// The engine's render rate (48 kHz before it has a graph).
    private var renderRate: Double {
        guard let engine else { return 48000 }
        return engine.withLock { engine.graph?.sampleRate } ?? 48000
    }

    /// Manual rendering: the next frame it renders (exact); live: nil (the next slice rendered).
    private func anchorFrame() -> Int64? {
        guard let engine else { return nil }
        return engine.withLock { engine.manualMode != nil ? (engine.manualState?.sampleTime ?? 0) : nil }
    }

    func updateSilencing() {
        let soloing = tracks.contains { $0.isSoloed }
        for t in tracks { t.schedule?.isSilenced = t.isMuted || (soloing && !t.isSoloed) }
    }

    func placementChanged() {
        if prepared { rebuild() }
    }

    func trackDestinationChanged() {
        if prepared { rebuild() }
    }

    /// Schedules made again (a new placement or destination), keeping the transport.
    private func rebuild() {
        prepareToPlay()
    }

    private func detachSchedules() {
        for instrument in attachedTo { instrument.detachSequence(clock: clock) }
        attachedTo = []
    }
}
