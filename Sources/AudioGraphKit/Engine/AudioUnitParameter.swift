// One parameter of an engine unit as an application sees it (a small Linux parameterTree entry).

/// A parameter of an ``AudioUnitLV2`` (cf. an `AUParameter` of `auAudioUnit.parameterTree`):
/// an LV2 control input port.
///
/// Thread safety: a value type; safe to share between threads.
public struct AudioUnitParameter: Sendable, Hashable {
    /// The port symbol: the key of ``AudioUnitLV2/setValue(_:forParameter:)`` (cf. `AUParameter.identifier`).
    public var identifier: String
    /// The human name (cf. `AUParameter.displayName`).
    public var displayName: String
    /// The range (cf. `minValue`/`maxValue`).
    public var minValue: Float
    public var maxValue: Float
    /// The plugin's default.
    public var defaultValue: Float
    /// The port index in the plugin.
    public var portIndex: Int
}
