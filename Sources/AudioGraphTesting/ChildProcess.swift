// A child process started with posix_spawn and reaped with waitpid (for tools that close inherited fds).
import Foundation
import Glibc

/// A child process started with `posix_spawn`, its stdout/stderr sent to files (or /dev/null).
///
/// Foundation's `Process` on Linux watches each child through an inherited socket and, when the
/// socket closes, blocks in `waitpid`; a daemon such as `pulseaudio`, which closes every inherited
/// descriptor at startup, therefore stalls Foundation's process monitor for all children. This
/// type avoids that: it waits with `waitpid` itself, only when asked.
///
/// Thread safety: use from one thread.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    public let processIdentifier: pid_t
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments` and `environment`; stdout and stderr go to the given
    /// files (created or truncated), or to /dev/null when nil; stdin reads `standardInput`
    /// (default /dev/null). When util-linux's `setpriv` is
    /// installed the child is started through it with `--pdeathsig KILL`, so that it dies with
    /// the test process even when that crashes (setpriv execs the tool: same process id).
    public init(executable: String, arguments: [String], environment: [String: String],
                standardInput: String? = nil, standardOutput: String? = nil, standardError: String? = nil) throws {
        var executable = executable
        var arguments = arguments
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
            arguments = ["--pdeathsig", "KILL", "--", executable] + arguments
            executable = "/usr/bin/setpriv"
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard rc == 0 else { throw ChildProcessError.spawnFailed(executable, rc) }
        processIdentifier = pid
    }

    deinit {
        terminate()
    }

    /// True until the child has exited (reaps it when it has).
    public var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let rc = waitpid(processIdentifier, &status, WNOHANG)
        if rc == processIdentifier || rc < 0 {
            exitStatus = rc < 0 ? -1 : Self.decode(status)
            return false
        }
        return true
    }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }

    /// Waits up to `timeout` seconds for the child to exit; returns its status (the exit code, or
    /// 128 + signal), nil on timeout.
    @discardableResult
    public func wait(timeout: Double = .infinity) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
        return exitStatus
    }

    /// SIGTERM (or `signal`), then SIGKILL after `grace` seconds; waits until it is gone. Idempotent.
    public func terminate(signal: Int32 = SIGTERM, grace: Double = 2) {
        guard isRunning else { return }
        kill(processIdentifier, signal)
        if wait(timeout: grace) == nil {
            kill(processIdentifier, SIGKILL)
            wait()
        }
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}

/// Why a child process could not start.
public enum ChildProcessError: Error, CustomStringConvertible {
    /// posix_spawn failed with this error number.
    case spawnFailed(String, Int32)

    public var description: String {
        switch self {
        case let .spawnFailed(path, code): return "cannot start \(path): \(String(cString: strerror(code)))"
        }
    }
}
