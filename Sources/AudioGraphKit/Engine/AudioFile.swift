// AVAudioFile without the prefix: a sound file read or written in PCM buffers, over libsndfile.
import Foundation
import Synchronization

/// A sound file read or written through ``AudioPCMBuffer``s, as `AVAudioFile`.
///
/// Reading: opened with ``init(forReading:)``; ``read(into:)`` decodes from ``framePosition``
/// (settable: the next read starts there) without decoding the rest of the file, so a long file
/// can be read in pieces. Any file libsndfile reads is accepted (WAV, AIFF, FLAC, Ogg, ...).
///
/// Writing: created with ``init(forWriting:settings:)`` (an existing file is replaced); the file
/// type follows the URL's extension (`wav`, `aiff`/`aif`, `flac`, `ogg`, and libsndfile's `caf`,
/// `au`, `w64`, `rf64`); ``write(from:)`` appends. The file is finished on ``close()`` or when
/// the object goes away.
///
/// ``fileFormat`` describes the samples the file stores (interleaved; 24-bit integers as
/// `.otherFormat`); ``processingFormat`` the buffers read and written: deinterleaved float32 at
/// the file's rate and channel count unless a common format is asked for.
///
/// Where Linux differs: errors are ``AudioFileError`` values (one line naming the file) rather
/// than `NSError`s; ``fileFormat`` of a compressed file (FLAC, Vorbis) is the linear PCM it
/// decodes to; setting ``framePosition`` of a file opened for writing is ignored (writes append).
///
/// Thread safety: every member takes an internal lock, so the object may be shared, but reads
/// and writes do disk I/O: never call them on the render thread.
public final class AudioFile: @unchecked Sendable {
    // MARK: Immutable after init
    /// The file's location.
    public let url: URL
    /// The format of the samples stored in the file (interleaved).
    public let fileFormat: AudioFormat
    /// The format of the buffers ``read(into:)`` fills and ``write(from:)`` takes.
    public let processingFormat: AudioFormat
    private let path: String

    // MARK: Shared (under `lock`)
    private let lock = Mutex(())
    private nonisolated(unsafe) var reader: SeekableAudioFileReader?
    private nonisolated(unsafe) var writer: AudioFileWriter?
    /// The AAC writer of an `.m4a`/`.mp4`/`.aac` file (FFmpeg), and the frames it was given.
    private nonisolated(unsafe) var aacWriter: AACFileWriter?
    private nonisolated(unsafe) var aacFrames: AudioFramePosition = 0
    private nonisolated(unsafe) var position: AudioFramePosition = 0
    /// Interleaved floats from the reader, then per-channel floats (allocated on first use).
    private nonisolated(unsafe) var interleaved: [Float] = []
    private nonisolated(unsafe) var staging: ChannelBufferStorage?

    /// Frames moved through the staging buffers per step (bounds the memory of a large read).
    private static let chunkFrames = 4096

    /// Opens a file for reading; the processing format is deinterleaved float32.
    public convenience init(forReading fileURL: URL) throws {
        try self.init(forReading: fileURL, commonFormat: .pcmFormatFloat32, interleaved: false)
    }

    /// Opens a file for reading with buffers of `format` samples, interleaved or not.
    public init(forReading fileURL: URL, commonFormat format: AudioCommonFormat, interleaved: Bool) throws {
        url = fileURL
        path = fileURL.path
        let file = try Self.openReader(path)
        let info = file.info
        guard let stored = AudioFormat(validating: StreamFormat(sampleRate: info.sampleRate, channelCount: info.channels,
                                                               sampleType: file.storedSampleType, isInterleaved: true)) else {
            throw AudioFileError.cannotOpen(path: path, reason: "\(info.channels) channels at \(info.sampleRate) Hz is not a usable format")
        }
        guard let processing = AudioFormat(commonFormat: format, sampleRate: info.sampleRate, channels: stored.channelCount,
                                           interleaved: interleaved) else {
            throw AudioFileError.formatMismatch(path: path, reason: "\(format) is not a processing format (use a PCM common format)")
        }
        fileFormat = stored
        processingFormat = processing
        reader = file
    }

    /// A reader of `path`: libsndfile's, or for `.m4a`/`.mp4`/`.aac` FFmpeg's decoding of the
    /// whole file into a temporary float CAF that is unlinked once open (so reads and seeks work
    /// alike; the memory is the disk's).
    private static func openReader(_ path: String) throws -> SeekableAudioFileReader {
        guard AACFileWriter.handles(path: path) else { return try SeekableAudioFileReader(path: path) }
        let decoded = try AACFileWriter.decode(path: path)
        let temporary = NSTemporaryDirectory() + "audiofile-\(UUID().uuidString).caf"
        defer { unlink(temporary) }
        let frames = decoded.channels.first?.count ?? 0
        let storage = ChannelBufferStorage(channelCount: decoded.channels.count, capacity: max(1, frames))
        for (c, samples) in decoded.channels.enumerated() {
            samples.withUnsafeBufferPointer { storage.list.channel(c).update(from: $0.baseAddress!, count: frames) }
        }
        let w = try AudioFileWriter(path: temporary, format: StreamFormat(sampleRate: decoded.sampleRate,
                                                                          channelCount: decoded.channels.count, sampleType: .float32))
        try w.write(storage.list, frameCount: frames)
        try w.close()
        return try SeekableAudioFileReader(path: temporary)
    }

    /// Creates a file (replacing any) for buffers of deinterleaved float32 samples.
    ///
    /// `settings` give the file's format with AVFAudio's keys: `AVSampleRateKey` and
    /// `AVNumberOfChannelsKey` (required), `AVLinearPCMBitDepthKey` and `AVLinearPCMIsFloatKey`
    /// (16/24/32-bit integers, 32/64-bit floats; when neither is given, float32, or 24-bit
    /// integers for FLAC), `AVFormatIDKey` (`kAudioFormatLinearPCM`, or `kAudioFormatFLAC` for a
    /// `.flac` file); other keys are ignored, so a format's ``AudioFormat/settings`` serve.
    /// Throws when a key is invalid or the file type cannot store the samples (FLAC and floats).
    public convenience init(forWriting fileURL: URL, settings: [String: Any]) throws {
        try self.init(forWriting: fileURL, settings: settings, commonFormat: .pcmFormatFloat32, interleaved: false)
    }

    /// Creates a file (replacing any) for buffers of `format` samples, interleaved or not; the
    /// file's own format comes from `settings` as in ``init(forWriting:settings:)``.
    public init(forWriting fileURL: URL, settings: [String: Any], commonFormat format: AudioCommonFormat,
                interleaved: Bool) throws {
        url = fileURL
        path = fileURL.path
        let codec = try AudioFileCodec.forWriting(path: path, settings: settings)
        let settings = AudioFileCodec.pcmSettings(settings, codec: codec)
        let stored: StreamFormat
        do {
            stored = try AudioFormat.parse(settings: settings, requireFormatID: kAudioFormatLinearPCM,
                                           alsoAccepted: [kAudioFormatFLAC],
                                           defaultSampleType: AudioFileWriter.defaultSampleType(forPath: path))
        } catch let problem as AudioFormat.SettingsProblem {
            throw AudioFileError.invalidSettings(path: path, reason: problem.reason)
        }
        if let id = settings[AVFormatIDKey].flatMap(AudioFormat.number), id == Double(kAudioFormatFLAC),
           AudioFileWriter.majorFormat(forPath: path) != AudioFileWriter.majorFormat(forPath: "x.flac") {
            throw AudioFileError.invalidSettings(path: path, reason: "kAudioFormatFLAC needs a .flac file")
        }
        let fileSamples = StreamFormat(sampleRate: stored.sampleRate, channelCount: stored.channelCount,
                                       sampleType: stored.sampleType, isInterleaved: true)
        guard let processing = AudioFormat(commonFormat: format, sampleRate: stored.sampleRate,
                                           channels: AudioChannelCount(stored.channelCount), interleaved: interleaved) else {
            throw AudioFileError.formatMismatch(path: path, reason: "\(format) is not a processing format (use a PCM common format)")
        }
        if codec == .aac {
            aacWriter = try AACFileWriter(path: path, sampleRate: Int(stored.sampleRate.rounded()), channelCount: stored.channelCount,
                                          bitRate: AudioFileCodec.aacBitRate(settings, channels: stored.channelCount))
        } else {
            writer = try AudioFileWriter(path: path, format: fileSamples)
            if let compression = AudioFileCodec.compression(settings, codec: codec, channels: stored.channelCount) {
                writer?.setEncoderCompression(level: compression.level, constantBitRate: compression.constant)
            }
            // As on Apple's platforms, what was written is a valid file even if the program ends
            // without closing it (top-level code never releases its globals).
            writer?.updateHeaderAfterEveryWrite()
        }
        fileFormat = AudioFormat(streamFormat: fileSamples)
        processingFormat = processing
    }

    /// The file's length in frames: what it holds when reading, what has been written when
    /// writing.
    public var length: AudioFramePosition {
        lock.withLock { _ in
            if let reader { return reader.info.frames }
            if aacWriter != nil { return aacFrames }
            return writer?.framesWritten ?? 0
        }
    }

    /// The frame the next read starts at (reading; set it to seek, clamped at 0), or the frames
    /// written so far (writing; setting it is ignored: writes append).
    public var framePosition: AudioFramePosition {
        get { lock.withLock { _ in aacWriter != nil ? aacFrames : writer?.framesWritten ?? position } }
        set { lock.withLock { _ in position = max(0, newValue) } }
    }

    /// Reads from ``framePosition`` until `buffer` is full or the file ends; see
    /// ``read(into:frameCount:)``.
    public func read(into buffer: AudioPCMBuffer) throws {
        try read(into: buffer, frameCount: buffer.frameCapacity)
    }

    /// Reads up to `frames` frames (at most the buffer's capacity) from ``framePosition`` into
    /// `buffer`, sets its `frameLength` to the frames read (0 at or past the end of the file, which
    /// is not an error) and advances ``framePosition`` by as many. Throws when the buffer's format
    /// is not ``processingFormat``, the file is not open for reading, or decoding fails.
    public func read(into buffer: AudioPCMBuffer, frameCount frames: AudioFrameCount) throws {
        try lock.withLock { _ throws(AudioFileError) in
            guard let reader else {
                throw .notOpen(path: path, operation: writer == nil ? "reading (closed)" : "reading (opened for writing)")
            }
            guard buffer.format == processingFormat else {
                throw .formatMismatch(path: path, reason: "buffer format \(buffer.format) is not the processing format \(processingFormat)")
            }
            let wanted = Int(min(frames, buffer.frameCapacity))
            let staging = stagingBuffer()
            let channels = Int(fileFormat.channelCount)
            var done = 0
            while done < wanted, position < reader.info.frames {
                let step = min(Self.chunkFrames, wanted - done)
                let got = interleaved.withUnsafeMutableBufferPointer { scratch in
                    let got = reader.read(into: scratch.baseAddress!, atFrame: position, frameCount: step)
                    if got > 0 {
                        for c in 0..<channels {
                            let dst = staging.list.channel(c)
                            for i in 0..<got { dst[i] = scratch[i * channels + c] }
                        }
                    }
                    return got
                }
                if got < 0 { throw .ioFailed(path: path, reason: "cannot read at frame \(position)") }
                if got == 0 { break }
                buffer.copyFrames(from: staging.list, sourceFrame: 0, toFrame: done, frameCount: got)
                done += got
                position += AudioFramePosition(got)
            }
            buffer.frameLength = AudioFrameCount(done)
        }
    }

    /// Appends the buffer's `frameLength` frames to the file, converting to the file's samples.
    /// Throws when the buffer's format is not ``processingFormat``, the file is not open for
    /// writing, or writing fails (disk full).
    public func write(from buffer: AudioPCMBuffer) throws {
        try lock.withLock { _ throws(AudioFileError) in
            guard writer != nil || aacWriter != nil else {
                throw .notOpen(path: path, operation: reader == nil ? "writing (closed)" : "writing (opened for reading)")
            }
            guard buffer.format == processingFormat else {
                throw .formatMismatch(path: path, reason: "buffer format \(buffer.format) is not the processing format \(processingFormat)")
            }
            let staging = stagingBuffer()
            let total = Int(buffer.frameLength)
            var done = 0
            while done < total {
                let step = min(Self.chunkFrames, total - done)
                buffer.copyFrames(to: staging.list, destinationFrame: 0, fromFrame: done, frameCount: step)
                if let aacWriter {
                    try aacWriter.write(staging.list, frameCount: step)
                    aacFrames += AudioFramePosition(step)
                } else {
                    try writer?.write(staging.list, frameCount: step)
                }
                done += step
            }
        }
    }

    /// Finishes a written file (header sizes) and closes the file; later reads and writes throw.
    /// Calling it again does nothing. A failure to finish the file cannot be reported here (as
    /// AVAudioFile's `close()`, it does not throw); write errors are thrown by ``write(from:)``.
    public func close() {
        lock.withLock { _ in
            reader = nil
            try? writer?.close()
            writer = nil
            try? aacWriter?.close()
            aacWriter = nil
        }
    }

    /// ``close()`` that reports a file it could not finish (the encoder's last frames, the
    /// header sizes or the MP4 index not written: a full disk), for the recorder's delegate.
    func closeReportingFailure() throws {
        try lock.withLock { _ throws(AudioFileError) in
            reader = nil
            defer {
                writer = nil
                aacWriter = nil
            }
            try writer?.close()
            try aacWriter?.close()
        }
    }

    /// Whether the file is open (not yet closed).
    public var isOpen: Bool { lock.withLock { _ in reader != nil || writer != nil || aacWriter != nil } }

    /// The per-channel float staging buffer and the interleaved scratch, made on first use.
    /// Call with the lock held.
    private func stagingBuffer() -> ChannelBufferStorage {
        if let staging { return staging }
        let channels = Int(fileFormat.channelCount)
        let made = ChannelBufferStorage(channelCount: channels, capacity: Self.chunkFrames)
        staging = made
        interleaved = [Float](repeating: 0, count: channels * Self.chunkFrames)
        return made
    }
}
