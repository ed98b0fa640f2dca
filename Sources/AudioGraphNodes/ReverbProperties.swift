// The `properties` of a `reverb` node: its factory room.
import AudioGraphCore

/// `properties` of a `reverb` node: `preset`, one of AVAudioUnitReverb's factory rooms
/// (default `mediumHall`).
///
/// Thread safety: a value type; safe to share between threads.
public struct ReverbProperties: Sendable, Hashable {
    /// The room (default mediumHall, as AVAudioUnitReverb's).
    public var preset: ReverbPreset

    /// Creates properties.
    public init(preset: ReverbPreset = .mediumHall) {
        self.preset = preset
    }
}
