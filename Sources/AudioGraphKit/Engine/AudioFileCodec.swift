// Which codec an AudioFile written at a path with AVFAudio settings stores, and the encoder settings it gets.
import AudioGraphNodes
import Foundation

/// Settings key: an encoder's bit rate in bits per second (MP3, Opus, AAC).
public let AVEncoderBitRateKey = "AVEncoderBitRateKey"
/// Settings key: an encoder's quality, an ``AudioQuality`` raw value (Vorbis, Opus, MP3, FLAC).
public let AVEncoderAudioQualityKey = "AVEncoderAudioQualityKey"
/// MPEG-4 AAC (`'aac '`): AAC-LC in an `.m4a`, `.mp4` or `.aac` file (FFmpeg's encoder).
public let kAudioFormatMPEG4AAC: AudioFormatID = 0x6161_6320
/// MPEG-1/2 Layer 3 (`'.mp3'`): MP3 in an `.mp3` file (libsndfile with LAME).
public let kAudioFormatMPEGLayer3: AudioFormatID = 0x2E6D_7033
/// Opus (`'opus'`): Opus in an Ogg `.opus` file (libsndfile with libopus).
public let kAudioFormatOpus: AudioFormatID = 0x6F70_7573

/// The data format of a file ``AudioFile`` writes, chosen as on Apple's platforms by the URL's
/// extension (the container) and `AVFormatIDKey` (what it holds).
///
/// | extension | `AVFormatIDKey` | codec | library |
/// | --- | --- | --- | --- |
/// | wav, aiff/aif, caf, au, w64, rf64 | `kAudioFormatLinearPCM` (or none) | linear PCM | libsndfile |
/// | flac | `kAudioFormatFLAC`, `kAudioFormatLinearPCM` (or none) | FLAC | libsndfile |
/// | ogg, oga | `kAudioFormatLinearPCM` (or none) | Vorbis | libsndfile |
/// | opus | `kAudioFormatOpus` (or none) | Opus (48, 24, 16, 12 or 8 kHz) | libsndfile |
/// | mp3 | `kAudioFormatMPEGLayer3` (or none) | MP3 | libsndfile |
/// | m4a, mp4, aac | `kAudioFormatMPEG4AAC` (or none) | AAC-LC | FFmpeg (libavformat, libavcodec) |
///
/// Thread safety: a value type.
enum AudioFileCodec: Equatable {
    case linearPCM, flac, vorbis, opus, mp3, aac

    /// The codec for `path` and `settings`; throws a reason when the format ID does not fit the extension.
    static func forWriting(path: String, settings: [String: Any]) throws(AudioFileError) -> AudioFileCodec {
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        let id = settings[AVFormatIDKey].flatMap(AudioFormat.number).map { AudioFormatID(clamping: Int64($0)) }
        func only(_ codec: AudioFileCodec, _ accepted: [AudioFormatID], _ name: String) throws(AudioFileError) -> AudioFileCodec {
            guard let id, !accepted.contains(id) else { return codec }
            throw .invalidSettings(path: path, reason: "\(AVFormatIDKey) \(fourCC(id)) cannot be stored in a .\(ext) file (it holds \(name))")
        }
        switch ext {
        case "m4a", "mp4", "aac": return try only(.aac, [kAudioFormatMPEG4AAC], "AAC: kAudioFormatMPEG4AAC")
        case "mp3": return try only(.mp3, [kAudioFormatMPEGLayer3], "MP3: kAudioFormatMPEGLayer3")
        case "opus": return try only(.opus, [kAudioFormatOpus], "Opus: kAudioFormatOpus")
        case "ogg", "oga": return try only(.vorbis, [kAudioFormatLinearPCM], "Vorbis: kAudioFormatLinearPCM")
        case "flac": return try only(.flac, [kAudioFormatFLAC, kAudioFormatLinearPCM], "FLAC: kAudioFormatFLAC")
        default:
            if let id, [kAudioFormatMPEG4AAC, kAudioFormatMPEGLayer3, kAudioFormatOpus].contains(id) {
                throw .invalidSettings(path: path, reason: "\(AVFormatIDKey) \(fourCC(id)) needs a "
                                       + (id == kAudioFormatMPEG4AAC ? ".m4a" : id == kAudioFormatOpus ? ".opus" : ".mp3") + " file")
            }
            return .linearPCM
        }
    }

    /// The settings with `AVFormatIDKey` removed for the lossy codecs (the linear PCM parser
    /// then reads their rate and channel count).
    static func pcmSettings(_ settings: [String: Any], codec: AudioFileCodec) -> [String: Any] {
        guard codec != .linearPCM && codec != .flac else { return settings }
        var s = settings
        s[AVFormatIDKey] = nil
        s[AVLinearPCMBitDepthKey] = nil
        s[AVLinearPCMIsFloatKey] = nil
        return s
    }

    /// libsndfile's compression level (0 best ... 1 smallest) and constant-bit-rate flag for
    /// `settings`: from `AVEncoderBitRateKey` by the measured linear maps (MP3: 320 kbit/s at 0
    /// to 32 at 1; Opus: about 512 kbit/s per stereo pair at 0 to 12 at 1), else from
    /// `AVEncoderAudioQualityKey` (`.max` → 0, `.min` → 1); nil when neither is given.
    static func compression(_ settings: [String: Any], codec: AudioFileCodec, channels: Int) -> (level: Double, constant: Bool)? {
        if let bitRate = settings[AVEncoderBitRateKey].flatMap(AudioFormat.number), bitRate > 0 {
            switch codec {
            case .mp3: return (min(1, max(0, (320_000 - bitRate) / 288_000)), true)
            case .opus:
                let perPair = bitRate * 2 / Double(max(1, channels))
                return (min(1, max(0, (512_000 - perPair) / 500_000)), true)
            default: break
            }
        }
        if let quality = settings[AVEncoderAudioQualityKey].flatMap(AudioFormat.number) {
            return (1 - min(127, max(0, quality)) / 127, false)
        }
        return nil
    }

    /// AAC's bit rate: `AVEncoderBitRateKey`, else 64 kbit/s per channel scaled by `AVEncoderAudioQualityKey`
    /// (`.max` 2×, `.high` 1.5×, `.medium` 1×, `.low` 0.75×, `.min` 0.5×).
    static func aacBitRate(_ settings: [String: Any], channels: Int) -> Int {
        if let bitRate = settings[AVEncoderBitRateKey].flatMap(AudioFormat.number), bitRate > 0 { return Int(bitRate) }
        var scale = 1.0
        if let q = settings[AVEncoderAudioQualityKey].flatMap(AudioFormat.number) {
            scale = q >= 127 ? 2 : q >= 96 ? 1.5 : q >= 64 ? 1 : q >= 32 ? 0.75 : 0.5
        }
        return Int(Double(AACFileWriter.defaultBitRatePerChannel * channels) * scale)
    }

    /// `'aac '` for a four-character code, else the number.
    static func fourCC(_ id: AudioFormatID) -> String {
        let bytes = [24, 16, 8, 0].map { UInt8((id >> $0) & 0xFF) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return String(id) }
        return "'" + String(decoding: bytes, as: UTF8.self) + "'"
    }
}
