// The sampler node's options: which SoundFont, which preset (or General MIDI).
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The options of a ``SamplerNode``: the SoundFont 2 file (or audio files, each a zone), and which preset every channel plays
/// (`program` in SoundFont bank `bank`; 128 is the percussion bank), or, with `program` nil,
/// General MIDI: each channel takes the program changes it receives (channel 10 drums), as a GM
/// module does. Graph files write `soundfont` (a path, relative to the graph file; default
/// ``defaultSoundFontPath``), `program` (0...127) and `bank` (0...16383). What the sampler plays
/// from the graph's start: `midiFile` (a Standard MIDI File, tempo map applied; `midiTracks`
/// and `midiChannels` choose what of it, by track index and channel 0...15) and `notes`
/// (`{ "time", "key", "duration", "velocity": 100, "channel": 0 }`, seconds).
///
/// Thread safety: a value; any thread.
public struct SamplerProperties: Hashable, Sendable {
    /// The SoundFont file (nil: ``defaultSoundFontPath``).
    public var soundFont: String?
    /// The preset every channel plays; nil: General MIDI.
    public var program: Int?
    /// The SoundFont bank of ``program`` (0 melodic, 128 percussion).
    public var bank: Int = 0
    /// Audio files played as an instrument, each file a zone (cf. `AVAudioUnitSampler.loadAudioFiles(at:)`;
    /// ``AudioFileInstrument`` says how they are mapped); when not empty, the SoundFont,
    /// ``program`` and ``bank`` are not used.
    public var audioFiles: [String] = []
    /// An SFZ instrument file whose regions are the zones (``SFZFile`` says what of SFZ is
    /// played); when set, the SoundFont, ``program``, ``bank`` and ``audioFiles`` are not used.
    public var sfz: String?

    /// A Standard MIDI File played from the graph's start (nil: none).
    public var midiFile: String?
    /// The file's tracks to play (nil: all).
    public var midiTracks: [Int]?
    /// The channels (0...15) to play (nil: all).
    public var midiChannels: [Int]?
    /// Notes played from the graph's start.
    public var notes: [SamplerNote] = []
    /// When the last event of the file or the notes comes, in seconds (set by the decoder).
    public var lastEventTime: Double?

    public init(soundFont: String? = nil, program: Int? = nil, bank: Int = 0) {
        self.soundFont = soundFont
        self.program = program
        self.bank = bank
    }

    /// How long a sampler's release tail is given after its last event when a render's length
    /// comes from the sampler.
    public static let releaseTail = 2.0

    /// The last event's time plus ``releaseTail`` (nil: nothing to play).
    public var playbackLength: Double? { lastEventTime.map { $0 + Self.releaseTail } }

    /// The General MIDI SoundFonts Debian installs, in the order they are tried for
    /// ``defaultSoundFontPath``: the `default-GM.sf2` alternative, then TimGM6mb and FluidR3.
    public static let defaultSoundFontCandidates = [
        "/usr/share/sounds/sf2/default-GM.sf2", "/usr/share/sounds/sf2/TimGM6mb.sf2", "/usr/share/sounds/sf2/FluidR3_GM.sf2",
    ]

    /// The first installed General MIDI SoundFont (`AG_SOUNDFONT` overrides), nil when none is.
    public static var defaultSoundFontPath: String? {
        if let env = getenv("AG_SOUNDFONT").map({ String(cString: $0) }), !env.isEmpty { return env }
        return defaultSoundFontCandidates.first { FileSystemPath.isReadable($0) }
    }

    /// An instrument of audio files, each file a zone (``audioFiles``).
    public init(audioFiles: [String]) {
        self.audioFiles = audioFiles
    }

    /// An instrument read from an SFZ file (``sfz``).
    public init(sfz: String) {
        self.sfz = sfz
    }

    /// The path the sampler loads.
    public var resolvedSoundFont: String? { soundFont ?? Self.defaultSoundFontPath }
}

/// A note a graph file gives a sampler: `key` (0...127) from `time` for `duration` seconds at
/// `velocity` (1...127) on `channel` (0...15).
///
/// Thread safety: a value; any thread.
public struct SamplerNote: Hashable, Sendable {
    public var time: Double
    public var key: Int
    public var duration: Double
    public var velocity: Int
    public var channel: Int

    public init(time: Double, key: Int, duration: Double, velocity: Int = 100, channel: Int = 0) {
        self.time = time
        self.key = key
        self.duration = duration
        self.velocity = velocity
        self.channel = channel
    }
}
