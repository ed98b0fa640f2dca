// How AudioPlayerNode schedules a buffer (cf. AVAudioPlayerNodeBufferOptions).
import AudioGraphNodes

/// Options for ``AudioPlayerNode/scheduleBuffer(_:at:options:completionHandler:)`` (cf.
/// AVAudioPlayerNodeBufferOptions, the same bits).
///
/// Thread safety: a value type.
public struct AudioPlayerNodeBufferOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The buffer loops until it is interrupted or the player stops.
    public static let loops = AudioPlayerNodeBufferOptions(rawValue: 1 << 0)
    /// The buffer interrupts what is playing (and drops what is queued) at its time.
    public static let interrupts = AudioPlayerNodeBufferOptions(rawValue: 1 << 1)
    /// The buffer interrupts what is playing at its loop point (or end).
    public static let interruptsAtLoop = AudioPlayerNodeBufferOptions(rawValue: 1 << 2)

    /// The engine node's options (the same bits).
    var scheduled: ScheduledBufferOptions { ScheduledBufferOptions(rawValue: rawValue) }
}
