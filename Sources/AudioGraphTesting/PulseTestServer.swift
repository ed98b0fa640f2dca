// A private, throw-away PulseAudio daemon for tests: a float32 48 kHz stereo null sink on a private socket.
import Foundation

/// Starts a real `pulseaudio` daemon of its own (no configuration file, no autospawn, no D-Bus)
/// listening on a socket in a fresh temporary folder, with one null sink `agtest`
/// (float32le, 48000 Hz, 2 channels by default) whose monitor source `agtest.monitor` records
/// exactly what is played into it. `stop()` kills the daemon and removes the folder; call it in
/// `tearDown` (it is idempotent and also done by `deinit`), so that no daemon outlives a test.
///
/// Typical use:
/// ```swift
/// let server = try PulseTestServer()
/// defer { server.stop() }
/// let context = try PulseContext(server: server.serverString)
/// let recorder = try server.startRecording(source: server.monitorSourceName, to: url)
/// ```
///
/// Thread safety: use from one thread (the test's).
public final class PulseTestServer: @unchecked Sendable {
    /// The private folder holding the socket, the daemon's runtime files and its log.
    public let directory: URL
    /// The daemon's native-protocol socket.
    public let socketPath: String
    /// The null sink's name.
    public let sinkName: String
    /// Its format.
    public let sampleRate: Int
    /// The null sink's channel count.
    public let channels: Int

    private var daemon: ChildProcess?
    private var children: [ChildProcess] = []

    /// Starts the daemon and waits (up to `timeout` seconds) until `pactl info` answers.
    public init(sinkName: String = "agtest", sampleRate: Int = 48000, channels: Int = 2, timeout: Double = 10) throws {
        self.sinkName = sinkName
        self.sampleRate = sampleRate
        self.channels = channels
        let dir = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("ag-pulse-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        directory = dir
        socketPath = dir.appendingPathComponent("native").path

        let logPath = dir.appendingPathComponent("daemon.log").path
        let process = try ChildProcess(executable: try Self.tool("pulseaudio"), arguments: [
            "-n", "-F", "/dev/null", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit",
            "--use-pid-file=no", "--system=false", "--log-target=stderr",
            // As a desktop's PulseAudio does (through rtkit): real-time scheduling for its I/O
            // threads, so a busy machine does not starve the server (root may; else ignored).
            "--realtime=yes", "--high-priority=yes",
            "--load=module-null-sink sink_name=\(sinkName) format=float32le rate=\(sampleRate) channels=\(channels) norewinds=1",
            "--load=module-native-protocol-unix socket=\(socketPath) auth-anonymous=1",
        ], environment: Self.privateEnvironment(directory: dir, server: nil), standardError: logPath)
        daemon = process

        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if !process.isRunning {
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                stop()
                throw PulseTestServerError.daemonExited(log: log)
            }
            if FileManager.default.fileExists(atPath: socketPath),
               (try? run("pactl", ["info"]))?.status == 0 { break }
            if Date() > deadline {
                stop()
                throw PulseTestServerError.notAnswering
            }
            usleep(50_000)
        }
        try settleSinkLatency(deadline: deadline)
    }

    /// A null sink with nobody listening renders up to two seconds ahead, so a stream that
    /// connects may wait that long before its first sample is consumed. A real sound card has a
    /// small fixed buffer; to behave like one, a `parec` of the monitor at 5 ms latency stays
    /// connected for the server's lifetime (it caps the sink's latency), and a suspend/resume
    /// restarts the sink's clock so that no long block rendered before it remains.
    private func settleSinkLatency(deadline: Date) throws {
        let keeper = try ChildProcess(executable: try Self.tool("parec"), arguments: [
            "--device=\(monitorSourceName)", "--format=float32le", "--rate=\(sampleRate)",
            "--channels=\(channels)", "--raw", "--latency-msec=5", "/dev/null",
        ], environment: environment)
        children.append(keeper)
        while try run("pactl", ["list", "short", "source-outputs"]).output.isEmpty {
            if Date() > deadline || !keeper.isRunning {
                stop()
                throw PulseTestServerError.notAnswering
            }
            usleep(20_000)
        }
        try run("pactl", ["suspend-sink", sinkName, "1"])
        try run("pactl", ["suspend-sink", sinkName, "0"])
    }

    /// Source outputs (recording streams) the fixture itself keeps connected (the latency keeper).
    public let ownSourceOutputs = 1

    deinit {
        stop()
    }

    /// `unix:<socket>`, for `PulseContext(server:)` and `PULSE_SERVER`.
    public var serverString: String { "unix:" + socketPath }

    /// The monitor source of the null sink.
    public var monitorSourceName: String { sinkName + ".monitor" }

    /// The daemon's process id (nil once stopped).
    public var processIdentifier: Int32? { daemon?.processIdentifier }

    /// True while the daemon runs.
    public var isRunning: Bool { daemon?.isRunning ?? false }

    /// Environment for child processes (pactl, parec, the CLI) that talk to this server only.
    public var environment: [String: String] { Self.privateEnvironment(directory: directory, server: serverString) }

    /// Kills the daemon (SIGTERM, then SIGKILL after 2 s), any recorders/players started by this
    /// fixture, and removes the folder. Idempotent.
    public func stop() {
        for child in children { child.terminate() }
        children.removeAll()
        if let process = daemon {
            daemon = nil
            process.terminate()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Kills the daemon abruptly (SIGKILL) without cleaning up, to test failure detection;
    /// `stop()` still cleans up afterwards.
    public func kill() {
        guard let process = daemon, process.isRunning else { return }
        process.send(SIGKILL)
        process.wait()
    }

    /// Runs a PulseAudio client tool (`pactl`, `pacmd`, ...) against this server; returns its
    /// exit status and standard output.
    @discardableResult
    public func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let outputPath = directory.appendingPathComponent("tool-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let process = try ChildProcess(executable: try Self.tool(tool), arguments: arguments,
                                       environment: environment, standardOutput: outputPath)
        guard let status = process.wait(timeout: 10) else {
            process.terminate(signal: SIGKILL)
            throw PulseTestServerError.toolHung(tool)
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return (status, output)
    }

    /// Starts `parec` recording `source` as raw float32le at the server's rate and channel count
    /// into `file`. Stop it with `stopRecording(_:)` (or `stop()`).
    public func startRecording(source: String, to file: URL, latencyMilliseconds: Int = 20) throws -> ChildProcess {
        let process = try ChildProcess(executable: try Self.tool("parec"), arguments: ["--device=\(source)", "--format=float32le", "--rate=\(sampleRate)",
                             "--channels=\(channels)", "--raw", "--latency-msec=\(latencyMilliseconds)",
                             file.path], environment: environment)
        children.append(process)
        return process
    }

    /// Starts `pacat` playing raw interleaved float32le samples from `file` into `sink` (default: the null sink).
    public func startPlaying(file: URL, sink: String? = nil) throws -> ChildProcess {
        let process = try ChildProcess(executable: try Self.tool("pacat"), arguments: ["--playback", "--device=\(sink ?? sinkName)", "--format=float32le",
                             "--rate=\(sampleRate)", "--channels=\(channels)", "--raw", file.path],
            environment: environment)
        children.append(process)
        return process
    }

    /// Stops a recorder or player started by this fixture (SIGINT, so parec flushes) and waits for it.
    public func stopChild(_ process: ChildProcess) {
        process.terminate(signal: SIGINT)
        children.removeAll { $0 === process }
    }

    /// Reads a raw float32le file as samples.
    public static func readRawFloat32(_ file: URL) throws -> [Float] {
        let data = try Data(contentsOf: file)
        return data.withUnsafeBytes { raw in
            Array(raw.bindMemory(to: Float.self).prefix(data.count / 4)).map { Float(bitPattern: UInt32(littleEndian: $0.bitPattern)) }
        }
    }

    // MARK: Helpers

    private static func privateEnvironment(directory: URL, server: String?) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = directory.path
        env["XDG_RUNTIME_DIR"] = directory.path
        env["PULSE_RUNTIME_PATH"] = directory.path
        env["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        env.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        env.removeValue(forKey: "DISPLAY")
        if let server { env["PULSE_SERVER"] = server } else { env.removeValue(forKey: "PULSE_SERVER") }
        return env
    }

    static func tool(_ name: String) throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let path = dir + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw PulseTestServerError.toolMissing(name)
    }
}

/// Why a `PulseTestServer` could not start.
public enum PulseTestServerError: Error, CustomStringConvertible {
    /// The daemon exited during startup; `log` is its stderr.
    case daemonExited(log: String)
    /// The daemon runs but `pactl info` did not answer in time.
    case notAnswering
    /// A PulseAudio tool is not installed.
    case toolMissing(String)
    /// A PulseAudio tool did not finish within 10 s.
    case toolHung(String)

    /// One line for test failures.
    public var description: String {
        switch self {
        case let .daemonExited(log): return "pulseaudio exited during startup: \(log)"
        case .notAnswering: return "pulseaudio did not answer pactl info in time"
        case let .toolMissing(name): return "\(name) is not installed"
        case let .toolHung(name): return "\(name) did not finish in time"
        }
    }
}
