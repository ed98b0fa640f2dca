// Options that know how long their node plays (a sampler playing a MIDI file): the render's default length.

/// A node type's options that know how long the node plays from the graph's start (a sampler
/// playing a MIDI file, its release tail included): a graph file without `duration` renders
/// until the longest of these and of its players' files.
///
/// Thread safety: a value's property; any thread.
public protocol NodePlaybackLength {
    /// Seconds from the graph's start until the node falls silent, nil when unknown or endless.
    var playbackLength: Double? { get }
}
