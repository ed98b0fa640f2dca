// How a MIDI file is read into a sequence (cf. AVMusicSequenceLoadOptions).

/// How ``AudioSequencer/load(from:options:)`` reads a file (cf. `AVMusicSequenceLoadOptions`).
public struct MusicSequenceLoadOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Keep the file's tracks (the default).
    public static let smf_PreserveTracks = MusicSequenceLoadOptions([])
    /// One track per MIDI channel (cf. `smfChannelsToTracks`).
    public static let smf_ChannelsToTracks = MusicSequenceLoadOptions(rawValue: 1 << 0)
    /// The other spelling of ``smf_ChannelsToTracks``.
    public static let smfChannelsToTracks = smf_ChannelsToTracks
    /// The other spelling of ``smf_PreserveTracks``.
    public static let smfPreserveTracks = smf_PreserveTracks
}
