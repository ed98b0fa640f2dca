// The recorder node's properties.
import AudioGraphCore

/// `properties` of a `recorder` node: the file it writes and its sample type.
///
/// Thread safety: a value type; safe to share between threads.
public struct RecorderProperties: Sendable, Hashable {
    /// The file as written in the graph (its extension picks the type, as for taps).
    public var file: String
    /// The file's path, resolved against the graph file's folder when relative.
    public var path: String
    /// The file's sample type (nil: float32, int24 for FLAC).
    public var sampleType: SampleType?

    /// Creates properties.
    public init(file: String, path: String, sampleType: SampleType? = nil) {
        self.file = file
        self.path = path
        self.sampleType = sampleType
    }
}
