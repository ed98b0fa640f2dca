// The `properties` of a `distortion` node: an optional factory preset.

/// `properties` of a `distortion` node: `preset`, one of ``DistortionPreset``'s names. When
/// given, the node's parameters start at the preset's values (parameters the file sets itself
/// still win); without it they start at AUDistortion's defaults.
///
/// Thread safety: a value type; safe to share between threads.
public struct DistortionProperties: Sendable, Hashable {
    /// The preset the parameters start from, or nil for AUDistortion's defaults.
    public var preset: DistortionPreset?

    /// Creates properties.
    public init(preset: DistortionPreset? = nil) {
        self.preset = preset
    }
}
