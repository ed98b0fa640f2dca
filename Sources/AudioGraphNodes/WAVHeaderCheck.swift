// A structural check of RIFF/WAVE LIST chunks that libsndfile 1.2 would parse forever.

#if canImport(Glibc)
import Glibc
#endif

/// Refuses WAV files whose `LIST` chunk holds a sub-chunk that runs past the chunk's end, before
/// libsndfile sees them: libsndfile 1.2.0's `wavlike_subchunk_parse` loops forever on such a
/// chunk inside `sf_open` (upstream issue libsndfile#1118; found by `FuzzWAVReader`, a 202-byte
/// file). Everything else, including files that are not RIFF/WAVE, is left to libsndfile.
///
/// Rule: walking the top-level chunks from byte 12 (`data` ends the walk when it runs past the end
/// of the file, as a truncated recording does), each `LIST` chunk's sub-chunks (after its 4-byte
/// list type; ending at the chunk's declared end or the end of the file, whichever is first) must
/// each fit, 8-byte header and payload, the pad byte after an odd payload excepted. A zero
/// sub-chunk identifier ends that chunk's walk, as it ends libsndfile's.
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
        let size = Int64(info.st_size)
        func bytes(at offset: Int64, _ count: Int) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: count)
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return got == count ? buffer : nil
        }
        func littleEndian32(_ b: [UInt8], _ i: Int) -> Int64 {
            Int64(b[i]) | Int64(b[i + 1]) << 8 | Int64(b[i + 2]) << 16 | Int64(b[i + 3]) << 24
        }
        guard let head = bytes(at: 0, 12), head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WAVE".utf8) else {
            return nil
        }
        var offset: Int64 = 12
        while offset + 8 <= size, let header = bytes(at: offset, 8) {
            let length = littleEndian32(header, 4)
            let end = offset + 8 + length
            if header[0..<4].elementsEqual("data".utf8), end > size { return nil }
            if header[0..<4].elementsEqual("LIST".utf8) {
                let listEnd = min(end, size)
                var sub = offset + 12
                while sub + 8 <= listEnd, let subHeader = bytes(at: sub, 8), !subHeader[0..<4].allSatisfy({ $0 == 0 }) {
                    let subLength = littleEndian32(subHeader, 4)
                    if sub + 8 + subLength > listEnd {
                        return "its LIST chunk at byte \(offset) holds a sub-chunk of \(subLength) bytes at byte \(sub) that runs past the chunk's end"
                    }
                    sub += 8 + subLength + (subLength & 1)
                }
            }
            offset = end + (length & 1)
        }
        return nil
    }
}
