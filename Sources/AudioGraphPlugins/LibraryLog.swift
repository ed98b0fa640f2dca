// Capturing what a C library (lilv, serd) prints on standard error during a call, to report it as one line of ours.
import Glibc
import Synchronization

/// lilv (and serd under it) print their warnings and errors straight to standard error: 400-500
/// lines for an LV2 path with unreadable folders, a "Failed to open library" line before our own
/// error. ``capturing(_:)`` runs a call with file descriptor 2 redirected into an unlinked
/// temporary file and returns the lines printed, which the caller turns into at most one line.
///
/// Thread safety: control threads only, never the render thread (it makes a file). Captures
/// are serialized; while one runs, whatever another thread writes to standard error is captured
/// too (the calls captured are short: loading the LV2 path, instantiating a plugin).
enum LibraryLog {
    private static let serial = Mutex(())

    /// Runs `body` with standard error captured; returns its result and the non-empty lines
    /// printed meanwhile (none when the redirection cannot be made: the body then prints as usual).
    static func capturing<T>(_ body: () -> T) -> (result: T, lines: [String]) {
        serial.withLock { _ in
            fflush(nil)
            guard let file = tmpfile() else { return (body(), []) }
            defer { fclose(file) }
            let saved = dup(2)
            guard saved >= 0, dup2(fileno(file), 2) >= 0 else {
                if saved >= 0 { close(saved) }
                return (body(), [])
            }
            let result = body()
            fflush(nil)
            dup2(saved, 2)
            close(saved)
            let size = Int(lseek(fileno(file), 0, SEEK_END))
            guard size > 0 else { return (result, []) }
            // At most the first 64 KiB: enough for the first line and a count.
            let length = min(size, 1 << 16)
            var bytes = [UInt8](repeating: 0, count: length)
            let got = pread(fileno(file), &bytes, length, 0)
            let text = String(decoding: bytes.prefix(max(0, got)), as: UTF8.self)
            let lines = text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.allSatisfy(\.isWhitespace) }
            return (result, lines)
        }
    }

    /// One line for `lines` printed by `library` while `doing`, or nil when there were none.
    static func summary(_ lines: [String], library: String, doing: String) -> String? {
        guard let first = lines.first else { return nil }
        let more = lines.count > 1 ? " (and \(lines.count - 1) more line\(lines.count == 2 ? "" : "s"))" : ""
        return "\(library) while \(doing): \(first.trimmingCharacters())\(more)"
    }
}

private extension String {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s = s.dropFirst() }
        while let c = s.last, c.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
