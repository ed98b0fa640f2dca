// A small pure-Swift RIFF/WAVE reader and writer for tests (PCM 8/16/24/32-bit, float 32/64-bit).
import Foundation

/// A whole WAV file in memory: its rate, sample type and samples, one `[Double]` per channel.
///
/// Reads what libsndfile, SoX, Python's soundfile and the `audiograph` command line write:
/// `WAVE_FORMAT_PCM` (8-bit unsigned, 16, 24, 32-bit signed), `WAVE_FORMAT_IEEE_FLOAT` (32, 64
/// bit) and `WAVE_FORMAT_EXTENSIBLE` with either sub-format; other chunks (`fact`, `PEAK`,
/// `LIST`, ...) are skipped. Integer samples are scaled to −1...1 the way libsndfile reads them
/// (divided by 2^(bits−1)). Writes 32-bit float or 16-bit PCM (rounded x·32767 after clipping
/// to −1...1, as libsndfile writes floats to shorts).
///
/// It exists so tests can read and write sound files without the C wrappers; the engine's own
/// file I/O goes through libsndfile.
///
/// Thread safety: a value type; `Sendable`.
public struct WAVFile: Equatable, Sendable {
    /// How samples are stored in the file.
    public enum SampleType: Equatable, Sendable {
        /// 8-bit unsigned PCM (read only).
        case uint8
        /// 16-bit signed PCM.
        case int16
        /// 24-bit signed PCM (read only).
        case int24
        /// 32-bit signed PCM (read only).
        case int32
        /// 32-bit IEEE float.
        case float32
        /// 64-bit IEEE float (read only).
        case float64

        /// Bits per sample in the file.
        public var bitsPerSample: Int {
            switch self {
            case .uint8: 8
            case .int16: 16
            case .int24: 24
            case .int32, .float32: 32
            case .float64: 64
            }
        }
    }

    /// Why a file could not be read or written.
    public enum Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        /// The first 12 bytes are not `RIFF....WAVE`.
        case notWAV
        /// A required chunk (`fmt ` or `data`) is missing.
        case missingChunk(String)
        /// The format tag / bit depth pair is not one this reader knows.
        case unsupportedFormat(formatTag: Int, bitsPerSample: Int)
        /// A header field is impossible (zero channels or rate, block size mismatch); says which.
        case invalidHeader(String)
        /// The file ends inside a chunk.
        case truncated
        /// Writing supports only `.float32` and `.int16`.
        case unsupportedWriteType(SampleType)
        /// Channels of different lengths cannot be written.
        case unequalChannelLengths
        /// The file system refused; carries its message.
        case io(String)

        /// One line for a test failure.
        public var description: String {
            switch self {
            case .notWAV: "not a RIFF/WAVE file"
            case .missingChunk(let name): "no '\(name)' chunk"
            case .unsupportedFormat(let tag, let bits): "unsupported WAV format tag \(tag) with \(bits) bits per sample"
            case .invalidHeader(let what): "invalid WAV header: \(what)"
            case .truncated: "WAV file ends inside a chunk"
            case .unsupportedWriteType(let type): "cannot write \(type) WAV files (float32 and int16 only)"
            case .unequalChannelLengths: "channels have different lengths"
            case .io(let message): message
            }
        }
    }

    /// Frames per second.
    public var sampleRate: Int
    /// The sample type in the file (for writing: `.float32` or `.int16`).
    public var sampleType: SampleType
    /// The samples, `samples[channel][frame]`, scaled to −1...1 for integer types.
    public var samples: [[Double]]

    /// Number of channels.
    public var channelCount: Int { samples.count }
    /// Frames per channel (of the first channel).
    public var frameCount: Int { samples.first?.count ?? 0 }

    /// A file to write, from samples of any floating-point type.
    public init<C: Collection>(sampleRate: Int, sampleType: SampleType = .float32, channels: [C])
    where C.Element: BinaryFloatingPoint {
        self.sampleRate = sampleRate
        self.sampleType = sampleType
        self.samples = channels.map { $0.map { Double($0) } }
    }

    /// Reads and parses the file at `url`.
    public init(contentsOf url: URL) throws(Error) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw .io("cannot read \(url.path): \(error)") }
        try self.init(data: data)
    }

    /// Parses a whole WAV file held in memory.
    public init(data: Data) throws(Error) {
        let bytes = [UInt8](data)
        guard bytes.count >= 12, Self.tag(bytes, 0) == "RIFF", Self.tag(bytes, 8) == "WAVE" else { throw .notWAV }
        var format: (tag: Int, channels: Int, rate: Int, blockAlign: Int, bits: Int)?
        var payload: Range<Int>?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = Self.tag(bytes, offset)
            let size = Int(Self.uint32(bytes, offset + 4))
            let body = offset + 8
            guard body + size <= bytes.count else { throw .truncated }
            if id == "fmt " {
                guard size >= 16 else { throw .invalidHeader("fmt chunk of \(size) bytes") }
                var tag = Int(Self.uint16(bytes, body))
                if tag == 0xFFFE {
                    guard size >= 40 else { throw .invalidHeader("extensible fmt chunk of \(size) bytes") }
                    tag = Int(Self.uint16(bytes, body + 24))  // first two bytes of the sub-format GUID
                }
                format = (tag, Int(Self.uint16(bytes, body + 2)), Int(Self.uint32(bytes, body + 4)),
                          Int(Self.uint16(bytes, body + 12)), Int(Self.uint16(bytes, body + 14)))
            } else if id == "data" {
                payload = body..<(body + size)
            }
            offset = body + size + (size & 1)  // chunks are padded to an even size
        }
        guard let format else { throw .missingChunk("fmt ") }
        guard let payload else { throw .missingChunk("data") }
        let type: SampleType
        switch (format.tag, format.bits) {
        case (1, 8): type = .uint8
        case (1, 16): type = .int16
        case (1, 24): type = .int24
        case (1, 32): type = .int32
        case (3, 32): type = .float32
        case (3, 64): type = .float64
        default: throw .unsupportedFormat(formatTag: format.tag, bitsPerSample: format.bits)
        }
        guard format.channels > 0 else { throw .invalidHeader("0 channels") }
        guard format.rate > 0 else { throw .invalidHeader("sample rate 0") }
        let bytesPerSample = type.bitsPerSample / 8
        guard format.blockAlign == bytesPerSample * format.channels else {
            throw .invalidHeader("block align \(format.blockAlign) for \(format.channels) channel(s) of \(type.bitsPerSample) bits")
        }
        let frames = payload.count / format.blockAlign
        var channels = [[Double]](repeating: [Double](repeating: 0, count: frames), count: format.channels)
        for frame in 0..<frames {
            for channel in 0..<format.channels {
                let at = payload.lowerBound + frame * format.blockAlign + channel * bytesPerSample
                channels[channel][frame] = Self.decode(bytes, at, type)
            }
        }
        self.sampleRate = format.rate
        self.sampleType = type
        self.samples = channels
    }

    /// The file's bytes: `RIFF`, a `fmt ` chunk (plus `fact` for float), `data`.
    public func data() throws(Error) -> Data {
        guard sampleType == .float32 || sampleType == .int16 else { throw .unsupportedWriteType(sampleType) }
        guard samples.allSatisfy({ $0.count == frameCount }) else { throw .unequalChannelLengths }
        guard channelCount > 0 else { throw .invalidHeader("0 channels") }
        let isFloat = sampleType == .float32
        let bytesPerSample = sampleType.bitsPerSample / 8
        let blockAlign = bytesPerSample * channelCount
        let dataSize = blockAlign * frameCount
        var out = [UInt8]()
        let fmtSize = isFloat ? 18 : 16
        let headerSize = 4 + (8 + fmtSize) + (isFloat ? 12 : 0) + 8
        Self.append(&out, "RIFF")
        Self.append32(&out, UInt32(headerSize + dataSize + (dataSize & 1)))
        Self.append(&out, "WAVE")
        Self.append(&out, "fmt ")
        Self.append32(&out, UInt32(fmtSize))
        Self.append16(&out, isFloat ? 3 : 1)
        Self.append16(&out, UInt16(channelCount))
        Self.append32(&out, UInt32(sampleRate))
        Self.append32(&out, UInt32(sampleRate * blockAlign))
        Self.append16(&out, UInt16(blockAlign))
        Self.append16(&out, UInt16(sampleType.bitsPerSample))
        if isFloat {
            Self.append16(&out, 0)  // cbSize
            Self.append(&out, "fact")
            Self.append32(&out, 4)
            Self.append32(&out, UInt32(frameCount))
        }
        Self.append(&out, "data")
        Self.append32(&out, UInt32(dataSize))
        // Samples straight into the byte buffer (tests write long files, often in debug builds).
        let header = out.count
        out += [UInt8](repeating: 0, count: dataSize + (dataSize & 1))
        out.withUnsafeMutableBytes { raw in
            for (channel, samples) in samples.enumerated() {
                samples.withUnsafeBufferPointer { samples in
                    var at = header + channel * bytesPerSample
                    for value in samples {
                        if isFloat {
                            raw.storeBytes(of: Float(value).bitPattern.littleEndian, toByteOffset: at, as: UInt32.self)
                        } else {
                            let clipped = min(1, max(-1, value.isNaN ? 0 : value))
                            raw.storeBytes(of: Int16((clipped * 32767).rounded()).littleEndian, toByteOffset: at, as: Int16.self)
                        }
                        at += blockAlign
                    }
                }
            }
        }
        return Data(out)
    }

    /// Writes `data()` to `url`, replacing any file there.
    public func write(to url: URL) throws(Error) {
        let bytes = try data()
        do { try bytes.write(to: url) } catch { throw .io("cannot write \(url.path): \(error)") }
    }

    // MARK: Byte access (little endian)

    private static func tag(_ b: [UInt8], _ at: Int) -> String {
        String(decoding: b[at..<(at + 4)], as: UTF8.self)
    }

    private static func uint16(_ b: [UInt8], _ at: Int) -> UInt16 {
        UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    private static func uint32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    private static func decode(_ b: [UInt8], _ at: Int, _ type: SampleType) -> Double {
        switch type {
        case .uint8:
            return (Double(b[at]) - 128) / 128
        case .int16:
            return Double(Int16(bitPattern: uint16(b, at))) / 32768
        case .int24:
            let raw = Int32(bitPattern: UInt32(b[at]) << 8 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 24) >> 8
            return Double(raw) / 8_388_608
        case .int32:
            return Double(Int32(bitPattern: uint32(b, at))) / 2_147_483_648
        case .float32:
            return Double(Float(bitPattern: uint32(b, at)))
        case .float64:
            return Double(bitPattern: UInt64(uint32(b, at)) | UInt64(uint32(b, at + 4)) << 32)
        }
    }

    private static func append(_ out: inout [UInt8], _ tag: String) { out.append(contentsOf: Array(tag.utf8)) }
    private static func append16(_ out: inout [UInt8], _ value: UInt16) {
        out.append(UInt8(value & 0xFF)); out.append(UInt8(value >> 8))
    }
    private static func append32(_ out: inout [UInt8], _ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}
