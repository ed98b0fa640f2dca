// Plain WAV files written without libsndfile, byte for byte as libsndfile writes them.
#if canImport(Glibc)
import Glibc
#endif

/// Writes a plain RIFF WAV file (16-, 24- and 32-bit integer, 32- and 64-bit float samples, any
/// channel count up to 1,024) with the bytes libsndfile writes for the same samples: a 16-byte
/// `fmt ` chunk (tag 1, integer; tag 3, float), for float files a `fact` chunk and the `PAD `
/// chunk where libsndfile would keep its PEAK chunk, the `data` chunk, and a pad byte after odd
/// data. ``AudioFileWriter`` uses it for every `.wav` it does not write as RF64, so that a render
/// to WAV does not load libsndfile and its seven codec libraries (about 0.6 ms and 85 page faults
/// of a process's start, Docs/Performance.md "Start-up"). `WAVFileWriterTests` compares its files
/// with libsndfile's, byte for byte.
///
/// The samples come interleaved, already in the file's sample type's range and grid
/// (``AudioFileWriter`` quantizes them); they are converted with ``SampleConversion``.
///
/// Thread safety: I/O — a control or worker thread, never the render thread. Not shared.
package final class WAVFileWriter {
    /// Where the file is written.
    package let path: String
    /// The file's sample type.
    package let sampleType: SampleType
    /// Channels per frame.
    package let channelCount: Int
    /// Frames per second, as the header stores it.
    package let sampleRate: UInt32
    private var descriptor: Int32
    /// Bytes of samples written so far (the `data` chunk's size).
    package private(set) var dataBytes: Int64 = 0
    /// Whether every write rewrites the header (``AudioFileWriter/updateHeaderAfterEveryWrite()``).
    package var updatesHeaderAfterEveryWrite = false
    /// The file's bytes of one batch, converted from the caller's samples (grown as needed).
    private var bytes = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// The channel counts a WAV file holds (libsndfile's `SF_MAX_CHANNELS`).
    package static let channelLimit = 1...1024

    /// The bytes before the samples: RIFF header, `fmt `, and for float files `fact` and `PAD `.
    package var headerSize: Int { Self.isFloat(sampleType) ? 12 + 24 + 12 + 8 + 8 * channelCount + 8 + 8 : 44 }

    /// Creates (truncates) `path` and writes the header of an empty file.
    /// - Throws: `.unsupportedSampleType` for a channel count outside ``channelLimit`` (libsndfile's
    ///   refusal), `.cannotOpen` when the file cannot be created, `.ioFailed` when the header
    ///   cannot be written.
    package init(path: String, sampleType: SampleType, channelCount: Int, sampleRate: UInt32) throws(AudioFileError) {
        guard Self.channelLimit.contains(channelCount) else { throw .unsupportedSampleType(path: path, sampleType: sampleType) }
        self.path = path
        self.sampleType = sampleType
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, reason: Self.systemError()) }
        do { try writeHeader(padded: false) } catch {
            Glibc.close(descriptor)
            descriptor = -1
            throw error
        }
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
        bytes.deallocate()
    }

    /// ``bytes`` with room for `size` bytes.
    private func batch(_ size: Int) -> UnsafeMutableRawBufferPointer {
        if bytes.count < size {
            bytes.deallocate()
            bytes = .allocate(byteCount: size, alignment: 16)
        }
        return UnsafeMutableRawBufferPointer(rebasing: bytes[..<size])
    }

    /// Appends `frames` interleaved frames of floats, converted to the file's sample type.
    package func write(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
        let count = frames * channelCount
        #if _endian(little)
        // Float files hold the machine's own floats: written straight from the caller's memory.
        if sampleType == .float32 { return try append(UnsafeRawBufferPointer(start: samples, count: count * 4)) }
        #endif
        let raw = batch(count * sampleType.bytesPerSample)
        SampleConversion.write(samples, count: count, to: raw.baseAddress!, as: sampleType)
        try append(UnsafeRawBufferPointer(raw))
    }

    /// Appends `frames` interleaved frames of doubles to a 64-bit float file.
    package func write(_ samples: UnsafePointer<Double>, frames: Int) throws(AudioFileError) {
        precondition(sampleType == .float64, "doubles go to float64 files")
        let count = frames * channelCount
        #if _endian(little)
        return try append(UnsafeRawBufferPointer(start: samples, count: count * 8))
        #else
        let raw = batch(count * 8)
        for i in 0..<count { raw.storeBytes(of: samples[i].bitPattern.littleEndian, toByteOffset: i * 8, as: UInt64.self) }
        try append(UnsafeRawBufferPointer(raw))
        #endif
    }

    /// Writes the final header and the pad byte after odd data, and closes the file.
    package func close() throws(AudioFileError) {
        guard descriptor >= 0 else { return }
        let fd = descriptor
        descriptor = -1
        var failure: AudioFileError?
        do {
            if dataBytes % 2 == 1 {
                var zero: UInt8 = 0
                try Self.writeAll(fd, UnsafeRawBufferPointer(start: &zero, count: 1), at: Int64(headerSize) + dataBytes, path: path)
            }
            try writeHeader(to: fd, padded: true)
        } catch { failure = error }
        if Glibc.close(fd) != 0, failure == nil { failure = .ioFailed(path: path, reason: "cannot finish the file: " + Self.systemError()) }
        if let failure { throw failure }
    }

    private func append(_ data: UnsafeRawBufferPointer) throws(AudioFileError) {
        guard descriptor >= 0 else { throw .notOpen(path: path, operation: "writing") }
        let limit = AudioFileWriter.classicSizeLimit
        guard dataBytes + Int64(data.count) <= limit else {
            throw .ioFailed(path: path, reason: "a WAV file holds at most 4 GiB of samples when its length is not given "
                            + "in advance (give the length, or use .w64, .rf64, .caf or .flac)")
        }
        try Self.writeAll(descriptor, data, at: Int64(headerSize) + dataBytes, path: path)
        dataBytes += Int64(data.count)
        if updatesHeaderAfterEveryWrite { try writeHeader(padded: false) }
    }

    private func writeHeader(padded: Bool) throws(AudioFileError) { try writeHeader(to: descriptor, padded: padded) }

    /// The header for the data written so far; `padded` counts the pad byte after odd data.
    private func writeHeader(to fd: Int32, padded: Bool) throws(AudioFileError) {
        var h: [UInt8] = []
        h.reserveCapacity(headerSize)
        func tag(_ s: StaticString) { s.withUTF8Buffer { h += $0 } }
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { h += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { h += $0 } }
        let pad: Int64 = padded ? dataBytes % 2 : 0
        let bytesPerSample = sampleType.bytesPerSample
        let blockAlign = channelCount * bytesPerSample
        tag("RIFF"); u32(UInt32(truncatingIfNeeded: Int64(headerSize) + dataBytes + pad - 8)); tag("WAVE")
        tag("fmt "); u32(16)
        u16(Self.isFloat(sampleType) ? 3 : 1); u16(UInt16(channelCount)); u32(sampleRate)
        u32(UInt32(truncatingIfNeeded: Int64(sampleRate) * Int64(blockAlign))); u16(UInt16(truncatingIfNeeded: blockAlign))
        u16(UInt16(bytesPerSample * 8))
        if Self.isFloat(sampleType) {
            tag("fact"); u32(4); u32(UInt32(truncatingIfNeeded: dataBytes / Int64(blockAlign)))
            tag("PAD "); u32(UInt32(8 + 8 * channelCount)); h += [UInt8](repeating: 0, count: 8 + 8 * channelCount)
        }
        tag("data"); u32(UInt32(truncatingIfNeeded: dataBytes))
        let failure = h.withUnsafeBytes { raw -> AudioFileError? in
            do throws(AudioFileError) { try Self.writeAll(fd, raw, at: 0, path: path) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// `pwrite` of all of `data` at `offset`, through short writes and signals.
    private static func writeAll(_ fd: Int32, _ data: UnsafeRawBufferPointer, at offset: Int64, path: String) throws(AudioFileError) {
        var done = 0
        while done < data.count {
            let n = pwrite(fd, data.baseAddress! + done, data.count - done, off_t(offset + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                throw .ioFailed(path: path, reason: "write failed: " + systemError())
            }
            if n == 0 { throw .ioFailed(path: path, reason: "write failed: no space written") }
            done += n
        }
    }

    private static func isFloat(_ type: SampleType) -> Bool { type == .float32 || type == .float64 }

    private static func systemError() -> String { String(cString: strerror(errno)) }
}
