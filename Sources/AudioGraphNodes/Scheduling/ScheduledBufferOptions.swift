// How a buffer joins a ScheduledSoundPlayerNode's schedule (cf. AVAudioPlayerNodeBufferOptions).

/// Options for ``ScheduledSoundPlayerNode/scheduleBuffer(_:frameCount:at:options:callbackType:completion:)``
/// (cf. `AVAudioPlayerNodeBufferOptions`; the same bits).
///
/// Thread safety: a value type.
public struct ScheduledBufferOptions: OptionSet, Sendable, Hashable {
    /// The option bits (AVAudioPlayerNodeBufferOptions' values).
    public let rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The buffer loops until it is interrupted (or the player stops). Regions scheduled after
    /// it with `at: nil` wait for the end of a looping buffer, which only an interruption sets.
    public static let loops = ScheduledBufferOptions(rawValue: 1 << 0)
    /// The buffer replaces what plays and what is queued: at its start time (`at:`, or now),
    /// regions already playing end and regions not yet started are dropped (their completion
    /// handlers run).
    public static let interrupts = ScheduledBufferOptions(rawValue: 1 << 1)
    /// Like ``interrupts``, but the region playing at the buffer's time (`at:`, or now) first
    /// finishes its current loop iteration (or, if it does not loop, its end); the buffer starts
    /// there.
    public static let interruptsAtLoop = ScheduledBufferOptions(rawValue: 1 << 2)
}
