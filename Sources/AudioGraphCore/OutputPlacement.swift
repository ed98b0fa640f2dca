// Where a described graph's output goes: as described, offline (a generic output) or live (PulseAudio).

/// Where a graph's output goes when its nodes are built from a description: the described node,
/// a generic output (offline rendering), or a PulseAudio output (live playback; `device`
/// overrides the sink). A node type of kind ``NodeKind/output`` reads it from its
/// ``NodeBuildContext`` and may hand the build to the registered type that plays that part
/// (``NodeBuildContext/handOver(to:)``); a capture or writing node may read it too (an input is
/// silent offline, a recorder hands its data to the offline renderer).
///
/// Thread safety: a value type; safe to share between threads.
public enum OutputPlacement: Sendable, Hashable {
    /// `output` nodes become PulseAudio outputs, `genericOutput` nodes generic outputs.
    case asDescribed
    /// Every output node becomes a generic output (`audiograph render`).
    case offline
    /// Every output node becomes a PulseAudio output on `device` (nil: the node's, else the default).
    case live(device: String?)

    /// The type name of the offline output (a generic output), which an `output` hands over to offline.
    public static let offlineOutputType = "genericOutput"
    /// The type name of the live output (PulseAudio), which a `genericOutput` hands over to live.
    public static let liveOutputType = "output"
}
