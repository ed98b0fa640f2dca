// Handing a command line from `audiograph` to `audiograph-tool`, the executable beside it.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hand-off of every command line `audiograph` does not run itself (every subcommand but a
/// plain `render`, `--help`, usage errors) to `audiograph-tool`, which `make build` and
/// `swift build` put in the same folder.
///
/// Thread safety: main thread only, before any other thread starts.
package enum ToolHandOff {
    /// The executable's name.
    package static let toolName = "audiograph-tool"

    /// `audiograph-tool` beside the running executable (`/proc/self/exe`'s folder, so a symbolic
    /// link to `audiograph` elsewhere still finds it), or nil when the folder cannot be known.
    package static var toolPath: String? {
        guard let real = realpath("/proc/self/exe", nil) else { return nil }
        defer { free(real) }
        let me = String(cString: real)
        guard let slash = me.lastIndex(of: "/") else { return nil }
        return String(me[...slash]) + toolName
    }

    /// Replaces this process by `audiograph-tool` with this process's own arguments, byte for byte
    /// (`CommandLine.unsafeArgv`: a file name that is not UTF-8 reaches the tool intact;
    /// `arguments[0]` stays the name the user typed). Returns only on failure, after one line on
    /// standard error: exit 3.
    package static func exec() -> Never {
        guard let path = toolPath else {
            Diagnostics.error("audiograph: cannot find the folder of the running executable (/proc/self/exe)")
            exit(ExitStatus.runtime)
        }
        execv(path, CommandLine.unsafeArgv)
        let reason = String(cString: strerror(errno))
        Diagnostics.error("audiograph: cannot run \(path): \(reason) (it is built beside audiograph: make build)")
        exit(ExitStatus.runtime)
    }
}
