// The player node's properties.

/// The part of a file a player plays: `{ "start": s, "duration": s }`.
public struct PlayerSegment: Sendable, Hashable {
    /// Offset into the file, seconds (default 0).
    public var start: Double
    /// Length to play, seconds (nil: to the end of the file).
    public var duration: Double?

    /// Creates a segment.
    public init(start: Double = 0, duration: Double? = nil) {
        self.start = start
        self.duration = duration
    }
}

/// `properties` of a `player` node.
///
/// Thread safety: a value type; safe to share between threads.
public struct PlayerProperties: Sendable, Hashable {
    /// The file as written in the graph.
    public var file: String
    /// The file's path, resolved against the graph file's folder when relative.
    public var path: String
    /// Whether playback loops (default false).
    public var loop: Bool
    /// Where on the graph timeline playback starts, seconds (default 0).
    public var startTime: Double
    /// The part of the file played (nil: all of it).
    public var segment: PlayerSegment?

    /// Creates properties.
    public init(file: String, path: String, loop: Bool = false, startTime: Double = 0, segment: PlayerSegment? = nil) {
        self.file = file
        self.path = path
        self.loop = loop
        self.startTime = startTime
        self.segment = segment
    }
}
