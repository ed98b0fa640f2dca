// What a successful load returns: the description plus what validation worked out.
import AudioGraphCore

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
    /// else the end of the longest non-looping player (its `startTime` plus what it plays; a node
    /// type's ``NodeTypeDescriptor/playbackEnd``), else 10 s.
    public var defaultRenderDuration: Double {
        if let duration = description.duration { return duration }
        var end: Double?
        for node in description.nodes {
            guard case .registered(let r) = node.configuration, let playbackEnd = r.type.descriptor?.playbackEnd,
                  let nodeEnd = playbackEnd(r.options, { audioFiles[$0] }) else { continue }
            end = max(end ?? 0, nodeEnd)
        }
        return end ?? 10
    }
}
