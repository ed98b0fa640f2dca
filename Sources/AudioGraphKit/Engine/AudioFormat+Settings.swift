// AudioFormat's settings dictionary (AVFAudio's AV*Key names): reading one and producing one.
import Foundation

extension AudioFormat {
    /// A linear PCM format from an AVFAudio settings dictionary, as `AVAudioFormat(settings:)`.
    ///
    /// `AVSampleRateKey` and `AVNumberOfChannelsKey` are required; `AVFormatIDKey` must be
    /// `kAudioFormatLinearPCM` when present; `AVLinearPCMIsFloatKey` (default false) and
    /// `AVLinearPCMBitDepthKey` (default 32 for floats, 16 for integers) choose the sample type
    /// among 16/24/32-bit integers and 32/64-bit floats; `AVLinearPCMIsNonInterleaved` defaults
    /// to false. Values may be any Swift number, a Bool or an `NSNumber`. Returns nil for anything
    /// else, including big-endian samples (buffers here are native-endian).
    public convenience init?(settings: [String: Any]) {
        guard let parsed = try? Self.parse(settings: settings, requireFormatID: kAudioFormatLinearPCM) else { return nil }
        self.init(validating: parsed)
    }

    /// The settings dictionary of this format: `AVFormatIDKey` (`kAudioFormatLinearPCM` as
    /// `UInt32`), `AVSampleRateKey` (`Double`), `AVNumberOfChannelsKey` (`UInt32`),
    /// `AVLinearPCMBitDepthKey` (`Int`), `AVLinearPCMIsFloatKey`, `AVLinearPCMIsNonInterleaved`
    /// and `AVLinearPCMIsBigEndianKey` (`Bool`). ``init(settings:)`` reads it back to an equal
    /// format.
    public var settings: [String: Any] {
        [AVFormatIDKey: kAudioFormatLinearPCM,
         AVSampleRateKey: sampleRate,
         AVNumberOfChannelsKey: channelCount,
         AVLinearPCMBitDepthKey: sampleType.bytesPerSample * 8,
         AVLinearPCMIsFloatKey: sampleType == .float32 || sampleType == .float64,
         AVLinearPCMIsNonInterleaved: !isInterleaved,
         AVLinearPCMIsBigEndianKey: false]
    }

    /// Why a settings dictionary does not describe a format (one line, no file named).
    struct SettingsProblem: Error {
        let reason: String
    }

    /// Reads the settings keys into a core format. `AVFormatIDKey`, when present, must be
    /// `requireFormatID` or one of `alsoAccepted`; `defaultSampleType` is used when neither the
    /// bit depth nor the float flag is given (nil: 16-bit integers, as AVAudioFormat). The
    /// format's validity (rate, channels) is checked by the caller.
    static func parse(settings: [String: Any], requireFormatID: AudioFormatID,
                      alsoAccepted: [AudioFormatID] = [], defaultSampleType: SampleType? = nil) throws -> StreamFormat {
        if let raw = settings[AVFormatIDKey] {
            guard let id = number(raw), id >= 0, id <= Double(UInt32.max),
                  AudioFormatID(id) == requireFormatID || alsoAccepted.contains(AudioFormatID(id)) else {
                throw SettingsProblem(reason: "\(AVFormatIDKey) \(raw) is not linear PCM")
            }
        }
        guard let rate = settings[AVSampleRateKey].flatMap(number), rate.isFinite, rate > 0 else {
            throw SettingsProblem(reason: "\(AVSampleRateKey) is missing or not a positive number")
        }
        guard let channels = settings[AVNumberOfChannelsKey].flatMap(number), channels >= 1, channels <= 1024,
              channels == channels.rounded() else {
            throw SettingsProblem(reason: "\(AVNumberOfChannelsKey) is missing or not a channel count from 1 to 1024")
        }
        func flag(_ key: String) throws -> Bool? {
            guard let raw = settings[key] else { return nil }
            guard let value = number(raw) else { throw SettingsProblem(reason: "\(key) is not a Bool") }
            return value != 0
        }
        if try flag(AVLinearPCMIsBigEndianKey) == true {
            throw SettingsProblem(reason: "big-endian samples are not supported (\(AVLinearPCMIsBigEndianKey))")
        }
        let isFloat = try flag(AVLinearPCMIsFloatKey)
        var bits: Int?
        if let raw = settings[AVLinearPCMBitDepthKey] {
            guard let value = number(raw), value == value.rounded() else {
                throw SettingsProblem(reason: "\(AVLinearPCMBitDepthKey) is not a number")
            }
            bits = Int(value)
        }
        let type: SampleType
        switch (isFloat, bits) {
        case (nil, nil): type = defaultSampleType ?? .int16
        case (true, nil), (true, 32?): type = .float32
        case (true, 64?): type = .float64
        case (false, nil), (nil, 16?), (false, 16?): type = .int16
        case (nil, 24?), (false, 24?): type = .int24
        case (nil, 32?), (false, 32?): type = .int32
        default:
            throw SettingsProblem(reason: "\(AVLinearPCMBitDepthKey) \(bits.map(String.init) ?? "?") is not supported for "
                                  + (isFloat == true ? "floats (32 or 64)" : "integers (16, 24 or 32)"))
        }
        let interleaved = !(try flag(AVLinearPCMIsNonInterleaved) ?? false)
        return StreamFormat(sampleRate: rate, channelCount: Int(channels), sampleType: type, isInterleaved: interleaved)
    }

    /// A settings value as a number: any Swift integer or float, a Bool, or an `NSNumber`.
    static func number(_ value: Any) -> Double? {
        switch value {
        case let v as Bool: return v ? 1 : 0
        case let v as Double: return v
        case let v as Float: return Double(v)
        case let v as Int: return Double(v)
        case let v as UInt: return Double(v)
        case let v as Int32: return Double(v)
        case let v as UInt32: return Double(v)
        case let v as Int64: return Double(v)
        case let v as UInt64: return Double(v)
        case let v as Int16: return Double(v)
        case let v as UInt16: return Double(v)
        case let v as NSNumber: return v.doubleValue
        default: return nil
        }
    }
}
