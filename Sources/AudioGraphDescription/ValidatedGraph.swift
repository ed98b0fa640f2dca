// What a successful load returns: the description plus what validation worked out.
import AudioGraphCore

/// A graph file that passed every check: what `GraphLoader.load` returns and what
/// `GraphLoader.build`, `OfflineRenderer` and `LivePlayer` take. Its description (the file's
/// model: nodes, properties as JSON, updates) stays inside the package; an application sees the
/// graph's settings here and the nodes themselves in the graph it builds.
///
/// Thread safety: a value type; safe to share between threads.
public struct ValidatedGraph: Sendable, Hashable {
    /// The description.
    package var description: GraphDescription
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

    /// How error lines name the file (the path as given to the loader).
    public var fileName: String { description.fileName }
    /// The graph's rate, hertz (the file's `sampleRate`, 48000 when not given).
    public var sampleRate: Double { description.sampleRate }
    /// The largest slice a render call asks for (the file's `maximumFramesPerSlice`).
    public var maximumFramesPerSlice: Int { description.maximumFramesPerSlice }
    /// The file's `duration` in seconds, nil when not given (see ``defaultRenderDuration``).
    public var duration: Double? { description.duration }
    /// The node ids, in file order (each a node of the graph `GraphLoader.build` makes).
    public var nodeIDs: [String] { description.nodes.map(\.id) }

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
