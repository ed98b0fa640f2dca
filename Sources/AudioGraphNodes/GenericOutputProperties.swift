// The generic (offline) output node's properties.
import AudioGraphCore

/// `properties` of a `genericOutput` node.
///
/// Thread safety: a value type; safe to share between threads.
public struct GenericOutputProperties: Sendable, Hashable {
    /// What the application or file receives; omitted fields are the input's.
    public var format: FormatDescription

    /// Creates properties.
    public init(format: FormatDescription = FormatDescription()) { self.format = format }
}
