// Errors of scheduling on a ScheduledSoundPlayerNode: one line each for users.

/// Why a ``ScheduledSoundPlayerNode`` refused to schedule something. Thrown on the calling
/// (control) thread only; nothing is scheduled when one is thrown.
public enum ScheduledSoundPlayerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A file's sample rate or channel count differs from the player's output format (as
    /// AVAudioPlayerNode, the file's processing format must match the connection format).
    case fileFormatMismatch(path: String, fileSampleRate: Double, fileChannels: Int, playerSampleRate: Double, playerChannels: Int)
    /// A buffer's channel count differs from the player's.
    case channelCountMismatch(node: String, bufferChannels: Int, playerChannels: Int)
    /// `frameCount` is negative or larger than the buffer holds.
    case frameCountOutOfRange(node: String, frameCount: Int, capacity: Int)
    /// A segment's first frame is negative or beyond the end of the file, or its frame count is negative.
    case segmentOutOfRange(path: String, startingFrame: Int64, frameCount: Int64, fileFrames: Int64)
    /// More regions are scheduled and not yet finished than the node holds.
    case tooManyScheduled(node: String, limit: Int)
    /// The file could not be opened or read.
    case file(AudioFileError)

    /// One line for users, naming the file or the player.
    public var description: String {
        switch self {
        case let .fileFormatMismatch(path, rate, channels, playerRate, playerChannels):
            return "\(path): \(ParameterInfo.format(rate)) Hz, \(channels) ch does not match the player's format "
                + "(\(ParameterInfo.format(playerRate)) Hz, \(playerChannels) ch)"
        case let .channelCountMismatch(node, buffer, player):
            return "player \"\(node)\": the buffer has \(buffer) channels, the player \(player)"
        case let .frameCountOutOfRange(node, frameCount, capacity):
            return "player \"\(node)\": frame count \(frameCount) is outside the buffer (0...\(capacity))"
        case let .segmentOutOfRange(path, start, count, fileFrames):
            return "\(path): segment of \(count) frames from frame \(start) is outside the file (\(fileFrames) frames)"
        case let .tooManyScheduled(node, limit):
            return "player \"\(node)\": more than \(limit) buffers and segments are scheduled"
        case .file(let e):
            return e.description
        }
    }
}
