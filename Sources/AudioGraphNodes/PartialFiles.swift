// The files this process writes aside (`.NAME.partial-PID.ext`), and the leftovers of runs that died.
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Every temporary file the process makes with ``AudioFileWriter/temporaryPath(for:)`` (renders,
/// taps, recorders) is registered here, so that a command stopped by a signal that cannot wait
/// for the render to reach the end of its slice can still remove them
/// (``removeRegistered()``, from the signal's own handler), and ``removeStale(besides:)`` removes
/// those that a killed or crashed run of another process left next to a file (their PID no
/// longer runs).
///
/// Thread safety: ``register(_:)`` from any control thread (it allocates); ``removeRegistered()``
/// from any thread or a signal handler: the registry is a list that is only ever pushed to (an
/// atomic compare-and-exchange of its head) and never freed, so reading it takes no lock and
/// allocates nothing (`unlink` is async-signal-safe).
package enum PartialFiles {
    /// One registered path (a C string of its own), and the one registered before it.
    private struct Entry {
        let path: UnsafeMutablePointer<CChar>
        let next: UnsafeMutablePointer<Entry>?
    }

    /// The newest entry (nil: none yet). `nonisolated(unsafe)`: pointers are not `Sendable`, but
    /// an entry is immutable once published and never freed.
    nonisolated(unsafe) private static let newest = Atomic<UnsafeMutablePointer<Entry>?>(nil)

    /// Remembers `path` as one of this process's temporary files (once: a path registered
    /// again is not listed twice).
    package static func register(_ path: String) {
        var head = newest.load(ordering: .acquiring)
        var entry = head
        while let e = entry {
            if strcmp(e.pointee.path, path) == 0 { return }
            entry = e.pointee.next
        }
        guard let copy = strdup(path) else { return }
        let node = UnsafeMutablePointer<Entry>.allocate(capacity: 1)
        while true {
            node.initialize(to: Entry(path: copy, next: head))
            let (exchanged, current) = newest.compareExchange(expected: head, desired: node, ordering: .acquiringAndReleasing)
            if exchanged { return }
            node.deinitialize(count: 1)
            head = current
        }
    }

    /// Removes every registered temporary file that still exists (renamed ones are gone already).
    /// For a command's last act on a signal — async-signal-safe: no lock, no allocation, only
    /// `unlink`. Returns how many were removed.
    @discardableResult
    package static func removeRegistered() -> Int {
        var removed = 0
        var entry = newest.load(ordering: .acquiring)
        while let e = entry {
            if unlink(e.pointee.path) == 0 { removed += 1 }
            entry = e.pointee.next
        }
        return removed
    }

    /// Removes the temporary files of `path` (`dir/.NAME.partial-PID.ext`) whose process no longer
    /// runs: what a run killed with SIGKILL, or crashed, left. Returns how many were removed.
    @discardableResult
    package static func removeStale(besides path: String) -> Int {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let dot = name.lastIndex(of: ".")
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        let prefix = ".\(stem).partial-"
        guard let dir = opendir(folder) else { return 0 }
        defer { closedir(dir) }
        var removed = 0
        let prefixBytes = Array(prefix.utf8)
        while let entry = readdir(dir) {
            // Up to the NUL only: the record may be shorter than d_name's 256 bytes (copying the
            // whole field read past it, which FuzzGraphLoader's AddressSanitizer found). Names
            // that do not start with the prefix (or "." and the prefix) are passed over on their
            // bytes, without making a String of each entry of a large folder. Kept:
            // `.NAME.partial-PID.ext`, or a render's temporary of that temporary
            // (`..NAME.partial-PID.partial-PID.ext`, what `plot GRAPH` writes first): the name,
            // and how many characters the prefix takes at its start.
            let match: (name: String, start: Int)? = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: UInt8.self, capacity: 256) { name -> (String, Int)? in
                    // A mismatch stops at the NUL at the latest (the prefix has none).
                    func starts(at skip: Int) -> Bool {
                        for (i, byte) in prefixBytes.enumerated() where name[skip + i] != byte { return false }
                        return true
                    }
                    let skip = starts(at: 0) ? 0 : (name[0] == UInt8(ascii: ".") && starts(at: 1) ? 1 : nil)
                    return skip.map { (String(cString: name), prefix.count + $0) }
                }
            }
            guard let (entryName, start) = match, entryName.hasSuffix(ext), entryName.count > start + ext.count else { continue }
            let rest = entryName.dropFirst(start).dropLast(ext.count)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count == rest.count || rest.dropFirst(digits.count) == ".partial-\(digits)",
                  let pid = pid_t(digits), pid != getpid() else { continue }
            // ESRCH: no such process. EPERM means it runs under another user: leave it.
            guard kill(pid, 0) != 0 && errno == ESRCH else { continue }
            if unlink(folder + "/" + entryName) == 0 { removed += 1 }
        }
        return removed
    }
}
