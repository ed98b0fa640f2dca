// Comparing file paths as the file system sees them, and refusing files that are not regular files.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File-system questions the loader and the renderer ask before touching a file: is it a
/// regular file (a FIFO or a device would block or never end), and do two spellings name the
/// same file (`a.wav`, `./a.wav`, `dir/../a.wav`, a symbolic link to it).
///
/// Thread safety: stateless; each call does a few system calls (no locks); control threads.
package enum FileSystemPath {
    /// The absolute, normalized form of `path`: the deepest existing folder is resolved with
    /// `realpath` (symbolic links, `.`, `..`), the rest is normalized by name. A file that
    /// exists as a symbolic link resolves to its target.
    package static func resolved(_ path: String) -> String {
        var absolute = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let cwd = getcwd(&buffer, buffer.count).map { String(cString: $0) } ?? "."
            absolute = cwd + "/" + path
        }
        var components = absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        // Find the longest prefix that exists and let realpath resolve it.
        var tail: [String] = []
        while true {
            let prefix = absolutePath(components)
            if let real = realpath(prefix, nil) {
                let resolvedPrefix = String(cString: real)
                free(real)
                return normalize(resolvedPrefix.split(separator: "/").map(String.init) + tail.reversed())
            }
            guard let last = components.popLast() else { return normalize(tail.reversed()) }
            tail.append(last)
        }
    }

    /// `/`-joined components with `.` dropped and `..` applied.
    private static func normalize(_ components: [String]) -> String {
        var out: [String] = []
        for c in components {
            if c == "." || c.isEmpty { continue }
            if c == ".." { _ = out.popLast() } else { out.append(c) }
        }
        return absolutePath(out)
    }

    /// "/" followed by `components` joined with "/". Written out rather than `joined(separator:)`,
    /// whose generic path (its element type's associated-type witnesses looked up at run time)
    /// cost the render command's start-up 0.26 M instructions for its four calls.
    private static func absolutePath(_ components: [String]) -> String {
        var path = components.isEmpty ? "/" : ""
        for c in components {
            path += "/"
            path += c
        }
        return path
    }

    /// `components` joined with "/" (written out for the reason ``absolutePath(_:)`` gives).
    private static func relativePath(_ components: [String]) -> String {
        var path = ""
        for (i, c) in components.enumerated() {
            if i > 0 { path += "/" }
            path += c
        }
        return path
    }

    /// Why `path` cannot be read as a file: nil for a regular file (or a link to one), else "no
    /// such file", "it is a FIFO", "it is a directory", "it is a device", ... Never opens the
    /// file, so a FIFO cannot block the caller.
    package static func notRegularFileReason(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT ? "no such file" : String(cString: strerror(errno))
        }
        return notRegularFileReason(mode: info.st_mode)
    }

    /// Why a file of `mode` (`st_mode`) cannot be read as a file, or nil for a regular file.
    private static func notRegularFileReason(mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "it is a directory, not a file"
        case S_IFIFO: return "it is a FIFO (named pipe), not a regular file"
        case S_IFCHR, S_IFBLK: return "it is a device, not a regular file"
        case S_IFSOCK: return "it is a socket, not a regular file"
        default: return "it is not a regular file"
        }
    }

    /// Why `path` cannot be an HRTF set, or nil: it must be a regular file in HDF5 format (SOFA
    /// files are netCDF-4, i.e. HDF5, whose signature starts the file or follows a 512, 1024,
    /// 2048... byte user block). Never opens a FIFO or device, so it cannot block; the graph
    /// checker and `HRTFSet` ask it before libmysofa reads the file.
    package static func sofaProblem(_ path: String) -> String? {
        if let reason = notRegularFileReason(path) { return reason }
        if hasHDF5Signature(path) { return nil }
        return "not a SOFA file (no HDF5 signature)"
    }

    /// The largest file ``contentsOfRegularFile(_:maximumSize:)`` reads by default: 256 MiB, far
    /// above any graph, SFZ or MIDI file, so a huge or sparse file is refused in one line instead
    /// of being allocated whole.
    package static let maximumReadSize = 256 << 20

    /// Why ``contentsOfRegularFile(_:maximumSize:)`` could not read a file, in the words an error line uses.
    package struct ReadFailure: Error, Equatable {
        /// "no such file", a reason of ``notRegularFileReason(_:)``, "the file is too large (more
        /// than N MiB)", or "cannot read the file".
        package let reason: String
    }

    /// The bytes of the regular file at `path` (or of the regular file a link names), read with
    /// `open`/`read` — no Foundation, so the command line's start-up does not pay for
    /// `FileManager`. A path that does not exist (or cannot be looked up) is "no such file"; a
    /// FIFO, device, folder or socket is refused by ``notRegularFileReason(_:)`` before it is opened,
    /// and again by `fstat` after an `O_NONBLOCK` open (a file swapped in between cannot block);
    /// a file larger than `maximumSize` bytes (by its size, or by what is read of a file that
    /// grows) is "the file is too large (more than N MiB)", never allocated whole; a file that
    /// cannot be opened or read is "cannot read the file".
    package static func contentsOfRegularFile(_ path: String, maximumSize: Int = maximumReadSize) throws(ReadFailure) -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw ReadFailure(reason: "no such file") }
        if let reason = notRegularFileReason(mode: info.st_mode) { throw ReadFailure(reason: reason) }
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw ReadFailure(reason: errno == ENOENT ? "no such file" : "cannot read the file") }
        defer { close(fd) }
        guard fstat(fd, &info) == 0 else { throw ReadFailure(reason: "cannot read the file") }
        if let reason = notRegularFileReason(mode: info.st_mode) { throw ReadFailure(reason: reason) }
        let tooLarge = ReadFailure(reason: "the file is too large (more than \(maximumSize / (1 << 20)) MiB)")
        guard Int64(info.st_size) <= Int64(maximumSize) else { throw tooLarge }
        // The size stat gave, then on to the end (a file that grows while read is read whole, up
        // to the limit).
        var bytes = [UInt8](repeating: 0, count: max(Int(info.st_size), 0) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= maximumSize else { throw tooLarge }
                bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 4096)))
            }
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got > 0 { count += got; continue }
            if got == 0 { break }
            if errno == EINTR { continue }
            throw ReadFailure(reason: "cannot read the file")
        }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Whether the regular file at `path` starts with the HDF5 signature, at offset 0 or after a
    /// user block of 512, 1024, 2048... bytes (up to 1 MiB), as HDF5 allows. SOFA files are
    /// netCDF-4, i.e. HDF5.
    package static func hasHDF5Signature(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let signature: [UInt8] = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]
        var bytes = [UInt8](repeating: 0, count: 8)
        var offset = 0
        while offset <= 1 << 20 {
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 8, off_t(offset)) }
            guard got == 8 else { return false }
            if bytes == signature { return true }
            offset = offset == 0 ? 512 : offset * 2
        }
        return false
    }

    /// Whether the process may read the file at `path` (`access(2)` with `R_OK`, as
    /// `FileManager.isReadableFile(atPath:)` asks).
    package static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// The last component of `path` (`/a/b.sfz` → `b.sfz`, `a/b/` → `b`, `/` → `/`), as
    /// `NSString.lastPathComponent` names it.
    package static func lastComponent(_ path: String) -> String {
        guard let last = path.split(separator: "/").last else { return path.isEmpty ? "" : "/" }
        return String(last)
    }

    /// `path` without its last component (`a/b.sfz` → `a`, `b.sfz` → ``, `/b.sfz` → `/`), as
    /// `NSString.deletingLastPathComponent` gives it.
    package static func deletingLastComponent(_ path: String) -> String {
        var parts = path.split(separator: "/")
        guard !parts.isEmpty else { return path.hasPrefix("/") ? "/" : "" }
        parts.removeLast()
        let folder = parts.map(String.init)
        return path.hasPrefix("/") ? absolutePath(folder) : relativePath(folder)
    }

    /// `relative` inside `folder` (`folder/relative`; `relative` alone when `folder` is empty,
    /// `folder` alone when `relative` is).
    package static func appending(_ relative: String, to folder: String) -> String {
        if folder.isEmpty { return relative }
        if relative.isEmpty { return folder }
        return folder.hasSuffix("/") ? folder + relative : folder + "/" + relative
    }

    /// `path` as `NSString.standardizingPath` gives it: a leading `~` or `~/` becomes `$HOME`;
    /// repeated and trailing slashes and the `.` components after the first are dropped; a
    /// relative path keeps its `..` (`a/./b/../c` → `a/b/../c`); in an absolute path each `..`
    /// takes the component before it away after the links of the part that exists are followed
    /// (``resolved(_:)``: realpath), as the kernel would open it — `/p/link/../x` is `x` beside
    /// the link's target, not `/p/x` — and by name past what exists (`..` at the root is the root).
    package static func standardized(_ path: String) -> String {
        var path = path
        if path == "~" || path.hasPrefix("~/"), let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty {
            path = home + path.dropFirst()
        }
        let absolute = path.hasPrefix("/")
        var out: [String] = []
        var climbs = false
        for part in path.split(separator: "/") {
            if part == "." && (absolute || !out.isEmpty) { continue }
            if part == ".." && absolute { climbs = true }
            out.append(String(part))
        }
        if absolute { return climbs ? resolved(absolutePath(out)) : absolutePath(out) }
        return relativePath(out)
    }

    /// Moves the finished file `finished` to `destination` (both in one folder), replacing a
    /// regular file there — how every file written aside lands (render output and taps, recorder
    /// nodes, AudioNodeRecorder, plots); returns 0, or the `errno` of the failure.
    ///
    /// An existing regular file is removed first and the finished one renamed into place, rather
    /// than renamed over it: on ext4 a rename that replaces a file forces the new file's data to
    /// disk first (`auto_da_alloc`, 15-20 ms for a 60 s stereo render, a third of the whole
    /// command), which a `rename` onto a free name does not. Readers still never see a partial
    /// file (the finished file appears whole); what is given up is an atomic swap of old for new
    /// and ext4's implicit flush — like SoX and ffmpeg, the renderer does not sync the disk
    /// (run `sync` before cutting the power).
    package static func moveIntoPlace(_ finished: String, _ destination: String) -> Int32 {
        var status = stat()
        if lstat(destination, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG {
            if unlink(destination) != 0 { return errno }
        }
        return rename(finished, destination) == 0 ? 0 : errno
    }
}
