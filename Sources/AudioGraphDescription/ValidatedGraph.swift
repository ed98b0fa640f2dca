// What a successful load returns: the description plus what validation worked out.
import AudioGraphCore
import AudioGraphNodes

/// A graph description that passed validation, with the formats after propagation and the sound
/// files' information.
///
/// Thread safety: a value type; safe to share between threads.
public struct ValidatedGraph: Sendable, Hashable {
    /// The description.
    public var description: GraphDescription
    /// Every node's bus formats in the initial graph.
    package var formats: ResolvedFormats
    /// Information about every sound file a player reads, by resolved path.
    public var audioFiles: [String: AudioFileInfo]

    /// Creates a validated graph.
    package init(description: GraphDescription, formats: ResolvedFormats, audioFiles: [String: AudioFileInfo]) {
        self.description = description
        self.formats = formats
        self.audioFiles = audioFiles
    }

    /// The length of an offline render when the command line gives none: the graph's `duration`,
    /// else the end of the longest non-looping player (its `startTime` plus what it plays) or of a
    /// node whose options know their length (``NodePlaybackLength``: a sampler playing a MIDI
    /// file or notes), else 10 s.
    public var defaultRenderDuration: Double {
        if let duration = description.duration { return duration }
        var end: Double?
        for node in description.nodes {
            if case .registered(let r) = node.configuration, let p = r.options as? NodePlaybackLength, let length = p.playbackLength {
                end = max(end ?? 0, length)
            }
            guard case .player(let player) = node.configuration, !player.loop,
                  let info = audioFiles[player.path] else { continue }
            let start = player.segment?.start ?? 0
            let played = player.segment?.duration.map { min($0, max(0, info.duration - start)) } ?? max(0, info.duration - start)
            end = max(end ?? 0, player.startTime + played)
        }
        return end ?? 10
    }
}
