// AVAudioFormat without the prefix: an immutable description of linear PCM audio.

/// The format of linear PCM audio: sample rate, channel count, sample type and layout, as
/// `AVAudioFormat` (same initializers, properties and equality).
///
/// An ``AudioFormat`` always describes linear PCM in native (little-endian) byte order. Its
/// sample type is one of the ``AudioCommonFormat`` cases, or packed 24-bit integers (reported as
/// `.otherFormat`) when it describes what a file stores. The standard format, the one every bus of
/// the engine carries, is deinterleaved 32-bit float.
///
/// Where Linux differs: AVAudioFormat refuses more than two channels without an
/// `AVAudioChannelLayout`; there are no channel layouts here, so up to 1024 channels are accepted.
///
/// Thread safety: immutable; share it between threads freely.
public final class AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second, in hertz.
    public let sampleRate: Double
    /// The number of channels.
    public let channelCount: AudioChannelCount
    /// Whether the channels are interleaved (frame after frame in one buffer) rather than one
    /// buffer per channel.
    public let isInterleaved: Bool
    /// The core's sample type (which also covers packed 24-bit integers).
    public let sampleType: SampleType

    /// A deinterleaved 32-bit float format (the standard format); nil when `sampleRate` is not
    /// positive and finite or `channels` is 0 or above 1024.
    public convenience init?(standardFormatWithSampleRate sampleRate: Double, channels: AudioChannelCount) {
        self.init(commonFormat: .pcmFormatFloat32, sampleRate: sampleRate, channels: channels, interleaved: false)
    }

    /// A format of `format` samples; nil for `.otherFormat`, a rate that is not positive and
    /// finite, or a channel count of 0 or above 1024.
    public convenience init?(commonFormat format: AudioCommonFormat, sampleRate: Double, channels: AudioChannelCount,
                             interleaved: Bool) {
        guard let type = format.sampleType else { return nil }
        self.init(validating: StreamFormat(sampleRate: sampleRate, channelCount: Int(channels), sampleType: type,
                                           isInterleaved: interleaved))
    }

    /// The format the core's `StreamFormat` describes (the core validates its formats, so this
    /// does not fail; an invalid one is a programming error and stops the program).
    public convenience init(streamFormat: StreamFormat) {
        guard streamFormat.isValid else {
            fatalError("AudioFormat(streamFormat:): invalid format \(streamFormat)")
        }
        self.init(validating: streamFormat)!
    }

    /// The format the core's `StreamFormat` describes; nil unless `format.isValid`.
    package init?(validating format: StreamFormat) {
        guard format.isValid else { return nil }
        sampleRate = format.sampleRate
        channelCount = AudioChannelCount(format.channelCount)
        isInterleaved = format.isInterleaved
        sampleType = format.sampleType
    }

    /// The same format as the core's `StreamFormat`.
    public var streamFormat: StreamFormat {
        StreamFormat(sampleRate: sampleRate, channelCount: Int(channelCount), sampleType: sampleType,
                     isInterleaved: isInterleaved)
    }

    /// The common format of the samples; `.otherFormat` for packed 24-bit integers.
    public var commonFormat: AudioCommonFormat { AudioCommonFormat(sampleType) }

    /// Whether this is the standard format: deinterleaved 32-bit float.
    public var isStandard: Bool { sampleType == .float32 && !isInterleaved }

    /// Bytes of one frame in one buffer: one sample, or one per channel when interleaved.
    var bytesPerFrame: Int { sampleType.bytesPerSample * (isInterleaved ? Int(channelCount) : 1) }

    /// Equal when rate, channel count, sample type and layout are (AVAudioFormat's `isEqual`).
    public static func == (lhs: AudioFormat, rhs: AudioFormat) -> Bool {
        lhs.sampleRate == rhs.sampleRate && lhs.channelCount == rhs.channelCount
            && lhs.sampleType == rhs.sampleType && lhs.isInterleaved == rhs.isInterleaved
    }

    /// Hashes the fields ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(sampleRate)
        hasher.combine(channelCount)
        hasher.combine(sampleType)
        hasher.combine(isInterleaved)
    }

    /// `<AudioFormat: 2 ch, 48000 Hz, Float32, deinterleaved>` (AVAudioFormat's shape; packed
    /// 24-bit integers print as `Int24`).
    public var description: String {
        let type = sampleType == .int24 ? "Int24" : commonFormat.description
        return "<AudioFormat: \(channelCount) ch, \(ParameterInfo.format(sampleRate)) Hz, \(type), "
            + (isInterleaved ? "interleaved>" : "deinterleaved>")
    }
}
