// The sampler node's options: which SoundFont, which preset (or General MIDI).
import Foundation

/// The options of a ``SamplerNode``: the SoundFont 2 file, and which preset every channel plays
/// (`program` in SoundFont bank `bank`; 128 is the percussion bank), or, with `program` nil,
/// General MIDI: each channel takes the program changes it receives (channel 10 drums), as a GM
/// module does. Graph files write `soundfont` (a path, relative to the graph file; default
/// ``defaultSoundFontPath``), `program` (0...127) and `bank` (0...16383).
///
/// Thread safety: a value; any thread.
public struct SamplerProperties: Hashable, Sendable {
    /// The SoundFont file (nil: ``defaultSoundFontPath``).
    public var soundFont: String?
    /// The preset every channel plays; nil: General MIDI.
    public var program: Int?
    /// The SoundFont bank of ``program`` (0 melodic, 128 percussion).
    public var bank: Int = 0

    public init(soundFont: String? = nil, program: Int? = nil, bank: Int = 0) {
        self.soundFont = soundFont
        self.program = program
        self.bank = bank
    }

    /// The General MIDI SoundFonts Debian installs, in the order they are tried for
    /// ``defaultSoundFontPath``: the `default-GM.sf2` alternative, then TimGM6mb and FluidR3.
    public static let defaultSoundFontCandidates = [
        "/usr/share/sounds/sf2/default-GM.sf2", "/usr/share/sounds/sf2/TimGM6mb.sf2", "/usr/share/sounds/sf2/FluidR3_GM.sf2",
    ]

    /// The first installed General MIDI SoundFont (`AG_SOUNDFONT` overrides), nil when none is.
    public static var defaultSoundFontPath: String? {
        if let env = ProcessInfo.processInfo.environment["AG_SOUNDFONT"], !env.isEmpty { return env }
        return defaultSoundFontCandidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// The path the sampler loads.
    public var resolvedSoundFont: String? { soundFont ?? Self.defaultSoundFontPath }
}
