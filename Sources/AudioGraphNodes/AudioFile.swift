// Sound files through libsndfile (loaded on first use) and plain WAV written directly: reading whole
// files or parts, writing slices as they render.
import CSndFile
#if canImport(Glibc)
import Glibc
#endif

/// Errors reading or writing sound files. Thrown on control threads only.
public enum AudioFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// libsndfile could not open the file (missing, unreadable, not a sound file).
    case cannotOpen(path: String, reason: String)
    /// The file's extension names no type we write.
    case unsupportedFileType(path: String)
    /// The file type cannot store this sample type (FLAC and floats, for example).
    case unsupportedSampleType(path: String, sampleType: SampleType)
    /// Reading or writing failed midway (disk full, I/O error).
    case ioFailed(path: String, reason: String)
    /// The settings asked for no format the file can be written in (missing rate, bad bit depth).
    case invalidSettings(path: String, reason: String)
    /// A buffer's format is not the file's processing format, or no buffer can have that format.
    case formatMismatch(path: String, reason: String)
    /// The file is not open for this (reading a file opened for writing, or a closed file).
    case notOpen(path: String, operation: String)
    /// The file type's 32-bit size fields cannot hold this much audio (`bytes` of samples).
    case tooLarge(path: String, bytes: Int64, typeName: String)

    /// The file the error is about.
    public var path: String {
        switch self {
        case let .cannotOpen(path, _), let .unsupportedFileType(path), let .unsupportedSampleType(path, _),
             let .ioFailed(path, _), let .invalidSettings(path, _), let .formatMismatch(path, _), let .notOpen(path, _),
             let .tooLarge(path, _, _):
            return path
        }
    }

    /// The same error about `path` (a file written aside under a temporary name is reported
    /// under the name the user gave).
    package func naming(_ path: String) -> AudioFileError {
        switch self {
        case let .cannotOpen(_, reason): return .cannotOpen(path: path, reason: reason)
        case .unsupportedFileType: return .unsupportedFileType(path: path)
        case let .unsupportedSampleType(_, type): return .unsupportedSampleType(path: path, sampleType: type)
        case let .ioFailed(_, reason): return .ioFailed(path: path, reason: reason)
        case let .invalidSettings(_, reason): return .invalidSettings(path: path, reason: reason)
        case let .formatMismatch(_, reason): return .formatMismatch(path: path, reason: reason)
        case let .notOpen(_, operation): return .notOpen(path: path, operation: operation)
        case let .tooLarge(_, bytes, name): return .tooLarge(path: path, bytes: bytes, typeName: name)
        }
    }

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "\(path): cannot open: \(reason)"
        case .unsupportedFileType(let path):
            return "\(path): unknown file type (use .wav, .aiff, .aif, .flac, .ogg, .opus, .mp3, .caf, .au, .w64 or .rf64)"
        case let .unsupportedSampleType(path, type):
            return "\(path): this file type cannot store \(type) samples"
        case let .ioFailed(path, reason): return "\(path): \(reason)"
        case let .invalidSettings(path, reason): return "\(path): invalid settings: \(reason)"
        case let .formatMismatch(path, reason): return "\(path): \(reason)"
        case let .notOpen(path, operation): return "\(path): not open for \(operation)"
        case let .tooLarge(path, bytes, typeName):
            return "\(path): \(typeName) files hold at most 4 GiB of samples; this one needs "
                + "\(AudioFileWriter.gibibytes(bytes)) GiB (use .wav, .w64, .rf64, .caf or .flac)"
        }
    }
}

/// Reading sound files with libsndfile (WAV, AIFF, FLAC, Ogg, ... whatever it reads); plain WAV
/// files of the common layouts through ``WAVFileReader`` (the same samples, without libsndfile).
///
/// Thread safety: every call does I/O: control threads only, never on the render thread.
package enum AudioFileReader {
    /// Opens `path` for reading; refuses FIFOs, devices and folders before libsndfile sees them
    /// (opening a FIFO blocks until a writer appears, a device may never end), and WAV files whose
    /// LIST chunk libsndfile would parse forever (`WAVHeaderCheck`).
    static func open(_ path: String, _ sfinfo: inout SF_INFO) throws(AudioFileError) -> OpaquePointer {
        try checkReadable(path)
        return try openWithLibsndfile(path, &sfinfo)
    }

    /// The checks before any reader opens `path`: a regular file, and not a WAV file whose LIST
    /// chunk libsndfile would parse forever.
    static func checkReadable(_ path: String) throws(AudioFileError) {
        if let reason = FileSystemPath.notRegularFileReason(path) { throw .cannotOpen(path: path, reason: reason) }
        if let reason = WAVHeaderCheck.problem(path) { throw .cannotOpen(path: path, reason: reason) }
    }

    /// The reader of a plain WAV file ``WAVFileReader`` takes, after ``checkReadable(_:)``; nil
    /// for every other file (then libsndfile's).
    static func nativeWAV(_ path: String) throws(AudioFileError) -> WAVFileReader? {
        try checkReadable(path)
        return WAVFileReader.open(path: path)
    }

    /// `sf_open` for reading, after ``checkReadable(_:)``.
    static func openWithLibsndfile(_ path: String, _ sfinfo: inout SF_INFO) throws(AudioFileError) -> OpaquePointer {
        try AudioFileWriter.loadLibSndFile(path: path)
        guard let file = sf_open(path, Int32(SFM_READ), &sfinfo) else {
            throw .cannotOpen(path: path, reason: String(cString: sf_strerror(nil)))
        }
        return file
    }

    /// Rate, channel count and length of a file.
    package static func info(path: String) throws(AudioFileError) -> AudioFileInfo {
        if let wav = try nativeWAV(path) { return wav.info }
        var sfinfo = SF_INFO()
        let file = try openWithLibsndfile(path, &sfinfo)
        sf_close(file)
        return AudioFileInfo(sampleRate: Double(sfinfo.samplerate), channels: Int(sfinfo.channels), frames: sfinfo.frames)
    }

    /// Reads `frameCount` frames (nil: to the end) from `startFrame` into one array per channel.
    package static func read(path: String, startFrame: Int64 = 0, frameCount: Int64? = nil) throws(AudioFileError)
        -> (info: AudioFileInfo, channels: [[Float]]) {
        if let wav = try nativeWAV(path) {
            let info = wav.info, ch = info.channels
            let start = max(0, min(startFrame, info.frames))
            let wanted = max(0, min(frameCount ?? (info.frames - start), info.frames - start))
            var interleaved = [Float](repeating: 0, count: Int(wanted) * ch)
            let got = interleaved.withUnsafeMutableBufferPointer { wav.read(into: $0.baseAddress!, atFrame: start, frameCount: Int(wanted)) }
            if got < 0 { throw .ioFailed(path: path, reason: "read failed") }
            return (info, deinterleave(interleaved, channels: ch, frames: got))
        }
        var sfinfo = SF_INFO()
        let file = try openWithLibsndfile(path, &sfinfo)
        defer { sf_close(file) }
        let info = AudioFileInfo(sampleRate: Double(sfinfo.samplerate), channels: Int(sfinfo.channels), frames: sfinfo.frames)
        let start = max(0, min(startFrame, sfinfo.frames))
        let wanted = max(0, min(frameCount ?? (sfinfo.frames - start), sfinfo.frames - start))
        if start > 0 && sf_seek(file, start, SEEK_SET) < 0 {
            throw .ioFailed(path: path, reason: "cannot seek to frame \(start)")
        }
        let ch = Int(sfinfo.channels)
        var interleaved = [Float](repeating: 0, count: Int(wanted) * ch)
        let got = interleaved.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, wanted) }
        if got < 0 { throw .ioFailed(path: path, reason: String(cString: sf_strerror(file))) }
        return (info, deinterleave(interleaved, channels: ch, frames: Int(got)))
    }

    /// The first `frames` frames of `interleaved`, one array per channel.
    private static func deinterleave(_ interleaved: [Float], channels ch: Int, frames: Int) -> [[Float]] {
        var channels = [[Float]](repeating: [Float](repeating: 0, count: frames), count: ch)
        for c in 0..<ch {
            channels[c].withUnsafeMutableBufferPointer { dst in
                for i in 0..<frames { dst[i] = interleaved[i * ch + c] }
            }
        }
        return channels
    }
}

/// Writes a sound file slice by slice (WAV, AIFF, FLAC, Ogg Vorbis, CAF, AU, W64, RF64 by the
/// file's extension), converting from the graph's non-interleaved floats to the file's sample type.
/// Plain WAV files go through ``WAVFileWriter`` (the bytes libsndfile would write, without
/// loading it); every other type, and a `.wav` written as RF64, through libsndfile.
///
/// Thread safety: I/O — a control or worker thread, never the render thread. Not shared.
package final class AudioFileWriter {
    /// Where the file is written.
    package let path: String
    /// The format written: rate, channels, sample type.
    package let format: StreamFormat
    private let major: Int32
    /// The libsndfile handle, for every file but a plain WAV.
    private var file: OpaquePointer?
    /// The writer of a plain WAV file.
    private var wav: WAVFileWriter?
    /// Interleaved frames waiting for the next `sf_writef_*` (``batchBytes`` of file samples at
    /// most): one write system call per batch instead of one per render slice.
    private var scratch: [Float] = []
    private var scratchDouble: [Double] = []
    /// Frames in `scratch` / `scratchDouble` not yet handed to libsndfile.
    private var pendingFrames = 0
    /// Frames per batch: ``batchBytes`` of interleaved samples.
    private let batchFrames: Int
    /// Whether every `write` reaches the file before it returns (``updateHeaderAfterEveryWrite()``).
    private var writesThrough = false
    /// Frames accepted so far (the last batch reaches the file by ``close()`` at the latest).
    package private(set) var framesWritten: Int64 = 0

    /// The bytes of interleaved samples collected before one write to the file: 1 MiB, large
    /// enough that a render's system calls and libsndfile calls cost nothing next to its DSP.
    package static let batchBytes = 1 << 20

    /// The libsndfile major format for a path's extension, or nil.
    package static func majorFormat(forPath path: String) -> Int32? {
        let ext = path.split(separator: "/").last.flatMap { name -> Substring? in
            guard let dot = name.lastIndex(of: ".") else { return nil }
            return name[name.index(after: dot)...]
        }?.lowercased()
        switch ext {
        case "wav", "wave": return Int32(SF_FORMAT_WAV)
        case "aiff", "aif", "aifc": return Int32(SF_FORMAT_AIFF)
        case "flac": return Int32(SF_FORMAT_FLAC)
        case "ogg", "oga", "opus": return Int32(SF_FORMAT_OGG)
        case "mp3": return Int32(SF_FORMAT_MPEG)
        case "caf": return Int32(SF_FORMAT_CAF)
        case "au", "snd": return Int32(SF_FORMAT_AU)
        case "w64": return Int32(SF_FORMAT_W64)
        case "rf64": return Int32(SF_FORMAT_RF64)
        default: return nil
        }
    }

    /// The most sample bytes a WAV, AIFF or AU file's 32-bit size fields can describe: 4 GiB less
    /// room for the header chunks, so the RIFF/FORM size never wraps.
    package static let classicSizeLimit: Int64 = 4 * 1024 * 1024 * 1024 - 64 * 1024

    /// The bytes of samples `frames` frames of `format` take uncompressed (saturating).
    package static func dataBytes(frames: Int64, format: StreamFormat) -> Int64 {
        let perFrame = Int64(format.channelCount * format.sampleType.bytesPerSample)
        let (bytes, overflow) = max(0, frames).multipliedReportingOverflow(by: perFrame)
        return overflow ? .max : bytes
    }

    /// The libsndfile major format written to `path` for `dataBytes` bytes of samples: a `.wav`
    /// past ``classicSizeLimit`` is written as RF64 (the EBU's 64-bit WAV, which readers of large
    /// WAV files take), under it as plain WAV (byte for byte what it always was).
    /// - Throws: `.unsupportedFileType`; `.tooLarge` for AIFF and AU past the limit (their
    ///   formats have no 64-bit variant).
    package static func majorFormat(forPath path: String, dataBytes: Int64) throws(AudioFileError) -> Int32 {
        guard let major = majorFormat(forPath: path) else { throw .unsupportedFileType(path: path) }
        guard dataBytes > classicSizeLimit else { return major }
        switch major {
        case Int32(SF_FORMAT_WAV): return Int32(SF_FORMAT_RF64)
        case Int32(SF_FORMAT_AIFF): throw .tooLarge(path: path, bytes: dataBytes, typeName: "AIFF")
        case Int32(SF_FORMAT_AU): throw .tooLarge(path: path, bytes: dataBytes, typeName: "AU")
        default: return major
        }
    }

    /// `bytes` in GiB with one decimal, for messages.
    static func gibibytes(_ bytes: Int64) -> String {
        let g = Double(bytes) / 1_073_741_824
        return g >= 1e6 ? String(Int64(g)) : String(Double(Int64(g * 10)) / 10)
    }

    /// Whether `path`'s type compresses (FLAC, Ogg Vorbis): its size is not known in advance.
    package static func isCompressed(path: String) -> Bool {
        let major = majorFormat(forPath: path)
        return major == Int32(SF_FORMAT_FLAC) || major == Int32(SF_FORMAT_OGG) || major == Int32(SF_FORMAT_MPEG)
    }

    /// Whether `path`'s type is a lossy codec (Ogg Vorbis, Opus, MP3): written from floats,
    /// with ``setEncoderCompression(level:constantBitRate:)`` choosing its bit rate.
    package static func isLossy(path: String) -> Bool {
        let major = majorFormat(forPath: path)
        return major == Int32(SF_FORMAT_OGG) || major == Int32(SF_FORMAT_MPEG)
    }

    /// Sets a lossy or FLAC encoder's compression before the first write: `level` 0 (best
    /// quality, highest bit rate) to 1 (smallest), libsndfile's `SFC_SET_COMPRESSION_LEVEL`
    /// (measured: MP3 320 down to 32 kbit/s, Opus about 512 down to 12 kbit/s for stereo,
    /// linearly); `constantBitRate` asks MP3 and Opus for a constant bit rate
    /// (`SFC_SET_BITRATE_MODE`). Returns false when libsndfile refuses it.
    @discardableResult
    package func setEncoderCompression(level: Double, constantBitRate: Bool) -> Bool {
        guard let file else { return false }
        var ok = true
        if constantBitRate && major != Int32(SF_FORMAT_FLAC) {
            var mode = Int32(SF_BITRATE_MODE_CONSTANT)
            ok = sf_command(file, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size)) == SF_TRUE
        }
        var value = min(1, max(0, level))
        return sf_command(file, Int32(SFC_SET_COMPRESSION_LEVEL), &value, Int32(MemoryLayout<Double>.size)) == SF_TRUE && ok
    }

    /// Whether a file written by this writer is an RF64 file (its container, not its extension).
    package var isRF64: Bool { major == Int32(SF_FORMAT_RF64) }

    /// Where a file at `path` is written before it is complete: `dir/.name.partial-PID.ext`,
    /// same folder (so the final rename is atomic), same extension (so the file type is the same).
    /// The path is registered with ``PartialFiles`` (a signal's last resort removes it), and the
    /// temporaries of `path` that dead processes left are removed first.
    package static func temporaryPath(for path: String) -> String {
        PartialFiles.removeStale(besides: path)
        let temporary = unregisteredTemporaryPath(for: path)
        PartialFiles.register(temporary)
        return temporary
    }

    /// ``temporaryPath(for:)`` without its side effects.
    package static func unregisteredTemporaryPath(for path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let dot = name.lastIndex(of: ".")
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        return "\(dir).\(stem).partial-\(getpid())\(ext)"
    }

    /// The sample type a file type stores when none is asked for: float32, or int24 for FLAC.
    package static func defaultSampleType(forPath path: String) -> SampleType {
        majorFormat(forPath: path) == Int32(SF_FORMAT_FLAC) ? .int24 : .float32
    }

    /// Checks that `path`'s type can store `sampleType`, without creating anything.
    package static func validate(path: String, sampleType: SampleType, channels: Int, sampleRate: Double) throws(AudioFileError) {
        guard let major = majorFormat(forPath: path) else { throw .unsupportedFileType(path: path) }
        if major == Int32(SF_FORMAT_WAV) {
            // What libsndfile's sf_format_check accepts for WAV and the types we write.
            guard WAVFileWriter.channelLimit.contains(channels), sampleRate >= 0 else {
                throw .unsupportedSampleType(path: path, sampleType: sampleType)
            }
            return
        }
        try loadLibSndFile(path: path)
        var info = SF_INFO()
        info.samplerate = Int32(clamping: FrameCount.int64(sampleRate))
        info.channels = Int32(clamping: channels)
        info.format = major | subtype(sampleType, major: major, path: path)
        guard sf_format_check(&info) != 0 else { throw .unsupportedSampleType(path: path, sampleType: sampleType) }
    }

    private static func subtype(_ type: SampleType, major: Int32, path: String) -> Int32 {
        if major == Int32(SF_FORMAT_OGG) {
            return path.lowercased().hasSuffix(".opus") ? Int32(SF_FORMAT_OPUS) : Int32(SF_FORMAT_VORBIS)
        }
        if major == Int32(SF_FORMAT_MPEG) { return Int32(SF_FORMAT_MPEG_LAYER_III) }
        switch type {
        case .float32: return Int32(SF_FORMAT_FLOAT)
        case .float64: return Int32(SF_FORMAT_DOUBLE)
        case .int16: return Int32(SF_FORMAT_PCM_16)
        case .int24: return Int32(SF_FORMAT_PCM_24)
        case .int32: return Int32(SF_FORMAT_PCM_32)
        }
    }

    /// Creates (truncates) the file at `path`. `expectedFrames`, when known, picks the container
    /// (see ``majorFormat(forPath:dataBytes:)``): RF64 for a `.wav` past 4 GiB; AIFF and AU past
    /// 4 GiB are refused before anything is created.
    package init(path: String, format: StreamFormat, expectedFrames: Int64? = nil) throws(AudioFileError) {
        let major = try Self.majorFormat(forPath: path, dataBytes: Self.dataBytes(frames: expectedFrames ?? 0, format: format))
        self.major = major
        self.path = path
        self.format = format
        // libsndfile stores the rate as a 32-bit integer; refuse rather than trap converting.
        guard format.sampleRate.rounded() >= 1, format.sampleRate.rounded() <= Double(Int32.max) else {
            throw .cannotOpen(path: path, reason: "a rate of \(format.sampleRate) Hz cannot be stored in a sound file")
        }
        let ch = max(1, format.channelCount)
        batchFrames = max(1, Self.batchBytes / (ch * (format.sampleType == .float64 ? 8 : 4)))
        // The batch's memory for the frames expected (a short render does not zero 1 MiB it never
        // uses: 256 page faults, a quarter of a 0.1 s render's); it grows to the batch if more come.
        let initialFrames = min(batchFrames, Int(clamping: max(1, expectedFrames ?? Int64(batchFrames))))
        if format.sampleType == .float64 {
            scratchDouble = [Double](repeating: 0, count: initialFrames * ch)
        } else {
            scratch = [Float](repeating: 0, count: initialFrames * ch)
        }
        if major == Int32(SF_FORMAT_WAV) {
            wav = try WAVFileWriter(path: path, sampleType: format.sampleType, channelCount: format.channelCount,
                                    sampleRate: UInt32(format.sampleRate.rounded()))
            return
        }
        try Self.loadLibSndFile(path: path)
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate.rounded())
        info.channels = Int32(format.channelCount)
        info.format = major | Self.subtype(format.sampleType, major: major, path: path)
        guard sf_format_check(&info) != 0 else { throw .unsupportedSampleType(path: path, sampleType: format.sampleType) }
        guard let f = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw .cannotOpen(path: path, reason: String(cString: sf_strerror(nil)))
        }
        file = f
        // Floats beyond ±1 are clipped when written as integers, not wrapped.
        sf_command(f, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        // No PEAK chunk in float WAV/AIFF: it holds a timestamp, and renders must be byte-identical.
        sf_command(f, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
    }

    deinit {
        if let wav {
            try? flush()
            try? wav.close()
        }
        guard let file else { return }
        try? flush()
        sf_close(file)
    }

    /// Loads libsndfile (opened on first use, `CSndFileLazy`) or throws `.cannotOpen` naming it.
    static func loadLibSndFile(path: String) throws(AudioFileError) {
        if let reason = LazyLibrary.sndfile.loadFailure {
            throw .cannotOpen(path: path, reason: "cannot load \(LazyLibrary.sndfile.name): \(reason)")
        }
    }

    /// Appends `frameCount` frames of `buffer` (its first `format.channelCount` channels; missing
    /// channels are written as silence). The frames are collected into batches of
    /// ``batchBytes``; a batch is written when it is full and by ``close()``, so a failure to
    /// write (disk full) is reported by the `write` or `close` that writes its batch.
    package func write(_ buffer: ChannelBufferList, frameCount: Int) throws(AudioFileError) {
        guard file != nil || wav != nil, frameCount > 0 else { return }
        var done = 0
        while done < frameCount {
            let n = min(frameCount - done, batchFrames - pendingFrames)
            interleave(buffer, from: done, frameCount: n)
            pendingFrames += n
            done += n
            framesWritten += Int64(n)
            if pendingFrames == batchFrames { try flush() }
        }
        if writesThrough { try flush() }
    }

    /// Copies frames `start ..< start + frameCount` of `buffer` into the batch after its
    /// pending frames, interleaved, as the file's samples (rounded to its integer grid).
    private func interleave(_ buffer: ChannelBufferList, from start: Int, frameCount: Int) {
        let ch = format.channelCount
        let base = pendingFrames * ch
        let needed = (pendingFrames + frameCount) * ch
        if format.sampleType == .float64 {
            if scratchDouble.count < needed { scratchDouble += [Double](repeating: 0, count: batchFrames * ch - scratchDouble.count) }
            scratchDouble.withUnsafeMutableBufferPointer { whole in
                let s = whole.baseAddress! + base
                for c in 0..<ch {
                    if c < buffer.channelCount {
                        let src = UnsafePointer(buffer.channel(c)) + start
                        for i in 0..<frameCount { s[i * ch + c] = Double(src[i]) }
                    } else {
                        for i in 0..<frameCount { s[i * ch + c] = 0 }
                    }
                }
            }
            return
        }
        if scratch.count < needed { scratch += [Float](repeating: 0, count: batchFrames * ch - scratch.count) }
        scratch.withUnsafeMutableBufferPointer { whole in
            let s = whole.baseAddress! + base
            if ch == 2 && buffer.channelCount >= 2 {
                // The common stereo case in one pass over both channels.
                let l = UnsafePointer(buffer.channel(0)) + start, r = UnsafePointer(buffer.channel(1)) + start
                for i in 0..<frameCount {
                    s[2 * i] = l[i]
                    s[2 * i + 1] = r[i]
                }
            } else {
                for c in 0..<ch {
                    if c < buffer.channelCount {
                        let src = UnsafePointer(buffer.channel(c)) + start
                        for i in 0..<frameCount { s[i * ch + c] = src[i] }
                    } else {
                        for i in 0..<frameCount { s[i * ch + c] = 0 }
                    }
                }
            }
            if format.sampleType != .float32 {
                // libsndfile turns floats into WAV/AIFF integers by truncating toward -infinity (up
                // to 1 LSB low); rounding first to SampleConversion's integer grid makes its
                // conversion exact, so integer files hold round(x * 2^(bits-1)) as everywhere else.
                SampleConversion.quantize(s, count: frameCount * ch, to: format.sampleType)
            }
        }
    }

    /// Hands the pending batch to libsndfile (one write for float files the machine's byte order).
    private func flush() throws(AudioFileError) {
        guard pendingFrames > 0 else { return }
        let count = pendingFrames
        if let wav {
            pendingFrames = 0
            let failure = format.sampleType == .float64
                ? scratchDouble.withUnsafeBufferPointer { b -> AudioFileError? in
                    do throws(AudioFileError) { try wav.write(b.baseAddress!, frames: count) } catch { return error }
                    return nil
                }
                : scratch.withUnsafeBufferPointer { b -> AudioFileError? in
                    do throws(AudioFileError) { try wav.write(b.baseAddress!, frames: count) } catch { return error }
                    return nil
                }
            if let failure { throw failure }
            return
        }
        guard let file else { return }
        pendingFrames = 0
        let written: Int64
        if format.sampleType == .float64 {
            written = scratchDouble.withUnsafeBufferPointer { sf_writef_double(file, $0.baseAddress, Int64(count)) }
        } else {
            written = scratch.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, Int64(count)) }
        }
        // libsndfile's MP3 (and other encoders') writes report every frame taken even when the
        // file system refused the bytes (a full disk): it only records the error, so ask for it.
        guard written == Int64(count), sf_error(file) == Int32(SF_ERR_NO_ERROR) else {
            throw .ioFailed(path: path, reason: "write failed: " + String(cString: sf_strerror(file)))
        }
    }

    /// Makes libsndfile rewrite the header after every write, so that the file on disk is a
    /// complete, readable file at all times, even if it is never closed (a program ending
    /// without releasing it). Costs a header write per call: for files written a buffer at a
    /// time by applications, not for renders.
    /// Compressed files (FLAC, Ogg) have no header to rewrite: nothing happens for them.
    package func updateHeaderAfterEveryWrite() {
        if let wav {
            writesThrough = true
            wav.updatesHeaderAfterEveryWrite = true
            try? flush()
            return
        }
        guard let file, !Self.isCompressed(path: path) else { return }
        writesThrough = true
        try? flush()
        sf_command(file, Int32(SFC_SET_UPDATE_HEADER_AUTO), nil, Int32(SF_TRUE))
    }

    /// Writes the last batch and closes the file; reports a failure to finish it (disk full).
    ///
    /// No `fsync`: a full disk fails the `write` of a batch itself (the file systems reserve
    /// space when the data is written, before write-back), and a failing `close` (network file
    /// systems report late write-back errors there) fails `sf_close`; both are reported here.
    /// Waiting for the data to reach the disk would only make every render slower.
    package func close() throws(AudioFileError) {
        if let w = wav {
            var failure: AudioFileError?
            do { try flush() } catch { failure = error }
            wav = nil
            do { try w.close() } catch { if failure == nil { failure = error } }
            if let failure { throw failure }
            return
        }
        guard let f = file else { return }
        var failure: AudioFileError?
        do { try flush() } catch { failure = error }
        file = nil
        if sf_close(f) != 0, failure == nil { failure = .ioFailed(path: path, reason: "cannot finish the file") }
        if let failure { throw failure }
    }
}
