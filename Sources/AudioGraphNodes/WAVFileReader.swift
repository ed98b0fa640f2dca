// Plain WAV files read without libsndfile: the samples libsndfile reads from them, for the common layouts.
#if canImport(Glibc)
import Glibc
#endif

/// Reads a plain WAV file's samples as libsndfile reads them, for the layouts renders and
/// recorders write: RIFF/WAVE with a 16-, 18- or 40-byte `fmt ` chunk (`WAVE_FORMAT_PCM` 16/24/32
/// bits, `WAVE_FORMAT_IEEE_FLOAT` 32/64 bits, or `WAVE_FORMAT_EXTENSIBLE` with either sub-format
/// and every bit valid) before a `data` chunk that lies whole inside the file. Any other file (8
/// bits, µ-law, ADPCM, RF64, a truncated `data` chunk, a header this walk finds odd, anything but
/// known chunks after `data`) gets nil
/// from ``open(path:)`` and is read by libsndfile as before, so a doubtful file is always read
/// the library's way. `WAVFileReaderTests` compares rates, lengths and every sample with
/// libsndfile's, bit for bit. Used by ``AudioFileReader`` and ``SeekableAudioFileReader``, so
/// that a render reading and writing WAV files does not load libsndfile and its seven codec
/// libraries.
///
/// The samples are converted as libsndfile converts them (``SampleConversion/read(from:as:stride:count:into:)``:
/// integers scaled by 2^−(bits−1), doubles rounded to floats).
///
/// Thread safety: not shared; every call does I/O, on a control or disk thread, never on the
/// render thread. ``read(into:atFrame:frameCount:)`` allocates nothing.
package final class WAVFileReader {
    /// Where the file is.
    package let path: String
    /// Rate, channels and length (whole frames of the `data` chunk).
    package let info: AudioFileInfo
    /// The sample type stored.
    package let sampleType: SampleType
    /// Where the samples start in the file.
    let dataOffset: Int64
    private var descriptor: Int32
    /// Raw samples between the file and the caller's floats (``scratchBytes``, made at open).
    private let scratch: UnsafeMutableRawPointer
    private static let scratchBytes = 1 << 16

    /// The reader of `path`, or nil when it is not a WAV file of the layouts above (or cannot be
    /// opened or read: libsndfile then reports it). Control threads (I/O, allocates).
    package static func open(path: String) -> WAVFileReader? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard let layout = Self.layout(fd) else {
            Glibc.close(fd)
            return nil
        }
        return WAVFileReader(path: path, fd: fd, layout: layout)
    }

    private init(path: String, fd: Int32, layout: Layout) {
        self.path = path
        descriptor = fd
        sampleType = layout.sampleType
        dataOffset = layout.dataOffset
        info = AudioFileInfo(sampleRate: Double(layout.sampleRate), channels: layout.channels,
                             frames: layout.dataBytes / Int64(layout.channels * layout.sampleType.bytesPerSample))
        scratch = .allocate(byteCount: Self.scratchBytes, alignment: 16)
    }

    deinit {
        Glibc.close(descriptor)
        scratch.deallocate()
    }

    /// Reads up to `frameCount` interleaved frames from file frame `frame` into `destination`
    /// (room for `frameCount * info.channels` floats). Returns the frames read, fewer at the end
    /// of the file (or of a file that shrank since it was opened), -1 when reading failed.
    /// Allocates nothing.
    package func read(into destination: UnsafeMutablePointer<Float>, atFrame frame: Int64, frameCount: Int) -> Int {
        guard frame >= 0, frameCount > 0, frame < info.frames else { return frame >= 0 && frameCount >= 0 ? 0 : -1 }
        let channels = info.channels, bytes = sampleType.bytesPerSample
        let wanted = Int(min(Int64(frameCount), info.frames - frame))
        let framesPerChunk = max(1, Self.scratchBytes / (channels * bytes))
        var done = 0
        while done < wanted {
            let n = min(framesPerChunk, wanted - done)
            let size = n * channels * bytes
            var got = 0
            while got < size {
                let r = pread(descriptor, scratch + got, size - got, off_t(dataOffset + (frame + Int64(done)) * Int64(channels * bytes) + Int64(got)))
                if r < 0 && errno == EINTR { continue }
                if r < 0 { return -1 }   // an I/O error
                if r == 0 { break }      // the file shrank: the whole frames before its end, as libsndfile
                got += r
            }
            let whole = got / (channels * bytes)
            SampleConversion.read(from: scratch, as: sampleType, count: whole * channels, into: destination + done * channels)
            done += whole
            if whole < n { break }
        }
        return done
    }

    // MARK: The header walk

    struct Layout {
        var sampleType: SampleType
        var channels: Int
        var sampleRate: Int
        var dataOffset: Int64
        var dataBytes: Int64
    }

    /// The layout of the WAV file open at `fd`, or nil when it is not one this reader takes.
    static func layout(_ fd: Int32) -> Layout? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let fileSize = Int64(st.st_size)
        func bytes(_ offset: Int64, _ count: Int) -> [UInt8]? {
            var b = [UInt8](repeating: 0, count: count)
            let r = b.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return r == count ? b : nil
        }
        func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
            UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
        }
        func u16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        guard let riff = bytes(0, 12), riff[0..<4] == [0x52, 0x49, 0x46, 0x46], riff[8..<12] == [0x57, 0x41, 0x56, 0x45]
        else { return nil }   // "RIFF" ... "WAVE"
        var at: Int64 = 12
        var format: Layout?
        // Chunks libsndfile reads for information only (nothing that changes the samples), which
        // may come before `data`; any other marker sends the file to libsndfile.
        let known: Set<[UInt8]> = ["fact", "PAD ", "LIST", "JUNK", "junk", "bext", "cue ", "smpl", "inst", "PEAK",
                                   "id3 ", "ID3 ", "acid", "cart", "umid", "levl", "iXML", "DISP", "afsp", "fake"].reduce(into: []) {
            $0.insert(Array($1.utf8))
        }
        /// Whether a LIST chunk's body is plain: `INFO` or `adtl`, then sub-chunks of printable
        /// names (none `data`, `fmt `, `RIFF` or `LIST`, which libsndfile's walk of the list would
        /// act on) that fill it exactly.
        func plainList(_ body: Int64, _ size: Int64) -> Bool {
            guard size >= 4, size <= 1 << 20, let list = bytes(body, Int(size)) else { return false }
            guard list[0..<4] == [0x49, 0x4E, 0x46, 0x4F] || list[0..<4] == [0x61, 0x64, 0x74, 0x6C] else { return false }
            let refused: Set<[UInt8]> = [Array("data".utf8), Array("fmt ".utf8), Array("RIFF".utf8), Array("LIST".utf8)]
            var i = 4
            while i < list.count {
                guard i + 8 <= list.count else { return false }
                let id = Array(list[i..<(i + 4)])
                guard id.allSatisfy({ (0x20...0x7E).contains($0) }), !refused.contains(id) else { return false }
                let n = Int(u32(list, i + 4))
                guard n <= list.count - i - 8 else { return false }
                i += 8 + n + (n & 1)
            }
            return i == list.count
        }
        /// libsndfile goes on past `data`: only known chunks may follow, up to the end (or a pad byte).
        func trailingChunksAreKnown(from start: Int64) -> Bool {
            var at = start
            for _ in 0..<64 {
                if at >= fileSize - 1 { return true }   // the end, a pad byte, or odd data without one
                guard at + 8 <= fileSize, let head = bytes(at, 8) else { return false }
                let id = Array(head[0..<4]), size = Int64(u32(head, 4))
                guard known.contains(id), size & 1 == 0, at + 8 + size <= fileSize,
                      id != Array("LIST".utf8) || plainList(at + 8, size) else { return false }
                at += 8 + size
            }
            return false
        }
        for _ in 0..<64 {
            guard at + 8 <= fileSize, let head = bytes(at, 8) else { return nil }
            let id = Array(head[0..<4]), size = Int64(u32(head, 4))
            let body = at + 8
            if id == Array("fmt ".utf8) {
                guard format == nil, size == 16 || size == 18 || size == 40, body + size <= fileSize,
                      let f = bytes(body, Int(size)) else { return nil }
                let tag = u16(f, 0), channels = u16(f, 2), rate = Int(u32(f, 4)), blockAlign = u16(f, 12), bits = u16(f, 14)
                var subformat = tag
                if tag == 0xFFFE {
                    // WAVE_FORMAT_EXTENSIBLE: cbSize 22, every bit valid, the PCM or IEEE float GUID.
                    guard size == 40, u16(f, 16) == 22, u16(f, 18) == bits else { return nil }
                    let guidTail: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
                    guard Array(f[26..<40]) == guidTail, f[25] == 0 else { return nil }
                    subformat = Int(f[24])
                }
                let type: SampleType
                switch (subformat, bits) {
                case (1, 16): type = .int16
                case (1, 24): type = .int24
                case (1, 32): type = .int32
                case (3, 32): type = .float32
                case (3, 64): type = .float64
                default: return nil
                }
                guard (1...1024).contains(channels), rate >= 1, rate <= Int(Int32.max), blockAlign == channels * type.bytesPerSample else { return nil }
                format = Layout(sampleType: type, channels: channels, sampleRate: rate, dataOffset: 0, dataBytes: 0)
            } else if id == Array("data".utf8) {
                // A zero size followed by samples is a recording never closed, which libsndfile
                // repairs by its own rules: it reads that file.
                guard var layout = format, body + size <= fileSize, size > 0 || body == fileSize,
                      trailingChunksAreKnown(from: body + size + (size & 1)) else { return nil }
                layout.dataOffset = body
                layout.dataBytes = size
                return layout
            } else if !known.contains(id) || size & 1 == 1 || (id == Array("LIST".utf8) && !plainList(body, size)) {
                return nil
            }
            at = body + size + (size & 1)
        }
        return nil
    }
}
