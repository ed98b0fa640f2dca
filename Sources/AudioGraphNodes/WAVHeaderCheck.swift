// A walk of RIFF/WAVE LIST chunks as libsndfile 1.2 walks them, to refuse those it would parse forever.

#if canImport(Glibc)
import Glibc
#endif

/// Refuses WAV files whose `LIST` (or top-level `INFO`) chunk libsndfile 1.2.0 would parse
/// forever inside `sf_open`, before libsndfile sees them. Everything else, including files that
/// are not RIFF/WAVE, is left to libsndfile.
///
/// The loop (libsndfile's `wavlike_subchunk_parse`, upstream issue libsndfile#1118): a sub-chunk's
/// size is rounded up to even and checked with `bytesread + size > chunk_length` in 32-bit
/// unsigned arithmetic, then skipped through a jump that reads it as a signed 32-bit count. A size
/// of 2³² − n with n ≥ `bytesread` wraps past the check and jumps n bytes *back*, and the same
/// sub-chunks are read again, forever, without further I/O (an I/O budget cannot catch it).
/// `FuzzWAVReader` found two such files (202 and 175 bytes) in CI runs.
///
/// So this walks each LIST chunk exactly as libsndfile does — no list type skipped (`INFO` and
/// `adtl` are markers without a length), `exif` sub-chunks, the `labl`/`note`/text markers, `data`
/// backing out of the chunk, a zero marker ending it, the chunk clipped to the file — with the
/// same 32-bit arithmetic and the same jumps back, and refuses the file when the walk comes back
/// to a state (read position, byte count) it was in: from there libsndfile repeats itself forever.
/// A jump back that leads on (a garbage size libsndfile survives) is not refused. The top-level
/// walk is libsndfile's too: it steps over each chunk by its size (`data` clipped to the file, as
/// for a truncated recording), not over a second `fmt `, resumes after a LIST chunk where the walk
/// of it ended, stops where libsndfile stops (a chunk claiming the whole file, an unknown
/// non-printable marker, the end) and refuses a chunk it reaches twice. `WAVHeaderCheckTests` holds the fuzzer's files; a differential run
/// against the real libsndfile (random LIST chunks, sizes near 2³²) agreed on every file.
///
/// Thread safety: a stateless function that reads the file; control threads only (I/O).
enum WAVHeaderCheck {
    /// Why libsndfile must not open `path`, or nil. Never opens FIFOs or devices for long: the
    /// caller has checked for a regular file; a file that cannot be read is left to libsndfile.
    static func problem(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let file = HeaderReader(fd: fd, size: Int64(info.st_size))
        guard let head = file.bytes(at: 0, 12), head[0..<4].elementsEqual("RIFF".utf8),
              head[8..<12].elementsEqual("WAVE".utf8) else {
            return nil
        }
        // libsndfile's top-level walk (`wav_read_header`): the chunk's handler, then the checks
        // that end the walk; the next chunk starts after the previous one's pad byte.
        var offset: Int64 = 12, pad: Int64 = 0
        var haveFormat = false
        var visited = Set<Int64>()
        while true {
            offset += pad
            guard let header = file.bytes(at: offset, 8), !header[0..<4].allSatisfy({ $0 == 0 }) else { return nil }
            // Top-level chunks are walked forwards but for a LIST chunk's own backward jumps.
            guard visited.insert(offset).inserted else {
                return "its chunk at byte \(offset) is read again and again (a LIST chunk jumps back to it)"
            }
            let marker = String(decoding: header[0..<4], as: Unicode.ASCII.self)
            let length = HeaderReader.littleEndian32(header, 4)
            var next = offset + 8 + Int64(length)
            var chunkSize = length
            switch marker {
            case "RIFF", "RIFX":
                return nil // libsndfile refuses a second RIFF header
            case "fmt ":
                // A second fmt chunk is not skipped: libsndfile reads on from its first byte.
                if haveFormat { next = offset + 8 }
                haveFormat = true
            case "data":
                // Skipped, clipped to the file (a truncated recording ends the walk here).
                next = min(next + Int64(length & 1), file.size)
                chunkSize = 0
            case "LIST", "INFO":
                var walk = SubchunkWalk(file: file, chunkOffset: offset, declaredLength: length)
                switch walk.run() {
                case let .refused(reason): return reason
                case let .backedOut(at): next = at
                case let .ended(at): next = at
                }
            default:
                if header[0..<4].allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) {
                    if header[0..<3].elementsEqual("TAG".utf8), offset + 128 == file.size { return nil } // ID3v1
                } else if length >= 0xFFFF_0000 || (offset + 8) & 3 == 0 {
                    return nil // an unknown marker ends libsndfile's walk
                } else {
                    next = offset + 5 // ... or, off a 4-byte boundary, it resynchronises a byte on
                }
            }
            // libsndfile stops after a chunk that claims the whole file or more, and at its end.
            if Int64(chunkSize) >= file.size || next >= file.size - 4 { return nil }
            offset = next
            pad = Int64(chunkSize & 1)
        }
    }
}

/// Reads of the file by absolute offset, and libsndfile's little-endian fields.
private struct HeaderReader {
    let fd: Int32
    let size: Int64

    func bytes(at offset: Int64, _ count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + Int64(count) <= size else { return nil }
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        return got == count ? buffer : nil
    }

    static func littleEndian32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }
}

/// One LIST chunk walked as libsndfile 1.2.0's `wavlike_subchunk_parse` walks it: `position` is
/// its read position in the file, `bytesRead` its 32-bit count, wrapping as the C one does.
private struct SubchunkWalk {
    enum Outcome {
        /// libsndfile would loop; the reason names the chunk and the sub-chunk.
        case refused(String)
        /// A `data` marker inside the chunk: libsndfile steps back onto it and resumes its
        /// top-level walk there.
        case backedOut(at: Int64)
        /// The walk ended at this position (the chunk's declared end for a well-formed chunk), where
        /// libsndfile's top-level walk resumes.
        case ended(at: Int64)
    }

    let file: HeaderReader
    let chunkOffset: Int64
    let declaredLength: UInt32
    var position: Int64
    var bytesRead: UInt32 = 0
    /// The last sub-chunk whose size made libsndfile jump back, for the message.
    var lastJump: Int64 = 0
    var lastJumpSize: UInt32 = 0

    private struct State: Hashable {
        let position: Int64
        let bytesRead: UInt32
    }

    init(file: HeaderReader, chunkOffset: Int64, declaredLength: UInt32) {
        self.file = file
        self.chunkOffset = chunkOffset
        self.declaredLength = declaredLength
        self.position = chunkOffset + 8
    }

    /// Markers libsndfile reads as a length and at most 2047 bytes of text.
    private static let textMarkers: Set<String> = [
        "ISFT", "ICOP", "IARL", "IART", "ICMT", "ICRD", "IENG", "IGNR", "INAM", "IPRD", "ISBJ", "ISRC", "IAUT", "ITRK",
    ]

    /// A bound on the steps after a jump back (a forward walk ends by itself: every step reads on),
    /// should a walk wander without repeating a state.
    private static let stepBudget = 100_000

    mutating func run() -> Outcome {
        // "Weird length" (files written by PEAK): one marker and a jump, then back to the top level.
        if declaredLength <= 8 { return .ended(at: position + Int64(declaredLength)) }
        var chunkLength = declaredLength
        if position + Int64(declaredLength) > file.size { chunkLength = UInt32(max(0, file.size - position)) }
        // Once the walk has jumped back, a state seen before means libsndfile loops forever.
        var jumpedBack = false
        var seen = Set<State>()
        var stepsSinceJumpingBack = 0
        walk: while bytesRead < chunkLength {
            if jumpedBack {
                stepsSinceJumpingBack += 1
                if !seen.insert(State(position: position, bytesRead: bytesRead)).inserted {
                    return refuse("makes libsndfile read its sub-chunks forever (a sub-chunk at byte \(lastJump) "
                                  + "declares \(lastJumpSize) bytes, which libsndfile's 32-bit arithmetic turns into a jump back)")
                }
                if stepsSinceJumpingBack > Self.stepBudget {
                    return refuse("takes libsndfile more than \(Self.stepBudget) steps to read after jumping back")
                }
            }
            guard let marker = readMarker() else { break }
            switch marker {
            case "adtl", "INFO":
                continue
            case "exif":
                if chunkLength > bytesRead { bytesRead &+= exif(length: chunkLength &- bytesRead) }
                continue
            case "data":
                return .backedOut(at: position - 4)
            case "\0\0\0\0":
                break walk
            default:
                break
            }
            let subchunk = position - 4
            if Self.textMarkers.contains(marker) {
                var size = read32()
                size &+= size & 1
                if size >= 2048 || bytesRead &+ size > chunkLength { break walk }
                read(Int64(size))
            } else if marker == "labl" {
                var size = read32()
                _ = read32()
                size &-= 4
                size &+= size & 1
                if size < 1 || size >= 2048 || bytesRead &+ size > chunkLength { break walk }
                read(Int64(size))
            } else if marker == "DISP" || marker == "ltxt" || marker == "note" {
                _ = read32()
                break walk
            } else {
                let declared = read32()
                let size = declared &+ (declared & 1)
                if bytesRead &+ size > chunkLength { break walk }
                if Int32(bitPattern: size) < 0 {
                    jumpedBack = true
                    lastJump = subchunk
                    lastJumpSize = declared
                }
                jump(size)
            }
        }
        // libsndfile skips what is left of the chunk, by a signed 32-bit jump too.
        if chunkLength > bytesRead { jump(chunkLength &- bytesRead) }
        return .ended(at: position)
    }

    private func refuse(_ what: String) -> Outcome {
        .refused("its LIST chunk at byte \(chunkOffset) \(what)")
    }

    /// libsndfile's "m": four bytes, or nothing at the end of the file (which ends the walk).
    private mutating func readMarker() -> String? {
        guard let bytes = file.bytes(at: position, 4) else { return nil }
        position += 4
        bytesRead &+= 4
        return String(decoding: bytes, as: Unicode.ASCII.self)
    }

    /// libsndfile's "4": a little-endian count; 0 (and nothing read) at the end of the file.
    private mutating func read32() -> UInt32 {
        guard let bytes = file.bytes(at: position, 4) else { return 0 }
        position += 4
        bytesRead &+= 4
        return HeaderReader.littleEndian32(bytes, 0)
    }

    /// libsndfile's "b": `count` bytes, or a short count at the end of the file.
    private mutating func read(_ count: Int64) {
        let got = max(0, min(count, file.size - position))
        position += got
        bytesRead &+= UInt32(truncatingIfNeeded: got)
    }

    /// libsndfile's "j": the count is read as a signed 32-bit number (so 2³² − n jumps n bytes
    /// back); a jump before the start of the file does not move, one past its end stops at the end;
    /// the count is added to `bytesRead` either way, as libsndfile adds it.
    private mutating func jump(_ count: UInt32) {
        let delta = Int64(Int32(bitPattern: count))
        if position + delta >= 0 { position = min(position + delta, file.size) }
        bytesRead &+= count
    }

    /// libsndfile's `exif_subchunk_parse`: forward reads only; returns its byte count.
    private mutating func exif(length: UInt32) -> UInt32 {
        let before = bytesRead
        var read: UInt32 { bytesRead &- before }
        while read < length {
            guard let marker = readMarker() else { break }
            switch marker {
            case "ever":
                jump(4)
                _ = read32()
            case "olym":
                var size = read32()
                if size > length || read &+ size > length { continue }
                size &+= size & 1
                jump(size)
            case "emnt", "emdl", "ecor", "etim", "erel", "eucm":
                var size = read32()
                bytesRead &+= 4
                size &+= size & 1
                if size >= 4096 { return read }
                self.read(Int64(size))
                if size > length { return read }
            default:
                break
            }
        }
        return read
    }
}
