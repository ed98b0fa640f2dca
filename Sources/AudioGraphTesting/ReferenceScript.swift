// Runs the tests' Python reference scripts (numpy, scipy, soundfile: scripts/reference) and reports why one could not run.
import Foundation

/// The independent references the tests compare with: Python scripts (numpy, scipy, soundfile,
/// pyloudnorm; `make deps-python` installs them) run with `python3`, and other tools (`sox`,
/// `ffmpeg`: ``runTool(_:input:)``), their standard output returned. A script that is missing, a Python or module that is not installed, or a script that
/// fails is a thrown ``ReferenceScriptError`` whose description says which and what to install,
/// with the script's own error output — so a test fails with the reason rather than on an empty
/// result.
///
/// ```swift
/// let y = try ReferenceScript.run("iir_reference.py", arguments: [b, a, input.path]).doubles
/// let loudness = try ReferenceScript.run(code: "import sys, pyloudnorm ...", arguments: [path]).text
/// ```
///
/// Thread safety: each call starts and waits for its own process; calls may run on any threads.
public enum ReferenceScript {
    /// The repository's root (this file is Sources/AudioGraphTesting/ReferenceScript.swift).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// What a script printed on its standard output.
    public struct Output: Sendable {
        /// The bytes as printed.
        public let data: Data
        /// As UTF-8 text.
        public var text: String { String(decoding: data, as: UTF8.self) }
        /// The non-empty lines of the text.
        public var lines: [String] { text.split(separator: "\n").map(String.init) }
        /// As native-endian 64-bit floats (a script's `sys.stdout.buffer.write(y.astype('<f8').tobytes())`).
        public var doubles: [Double] { data.withUnsafeBytes { Array($0.bindMemory(to: Double.self)) } }
        /// As native-endian 32-bit floats.
        public var floats: [Float] { data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) } }
    }

    /// Runs the script `name` — a file of scripts/reference, or a path from the repository's root
    /// (`scripts/bench/make-gm-song.py`) — with `arguments`, `input` on its standard input.
    /// - Throws: ``ReferenceScriptError``.
    @discardableResult
    public static func run(_ name: String, arguments: [String] = [], input: Data? = nil) throws -> Output {
        let path = name.contains("/") ? root.appendingPathComponent(name).path
            : root.appendingPathComponent("scripts/reference").appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else { throw ReferenceScriptError.scriptMissing(path: path) }
        return try python([path] + arguments, what: name, input: input)
    }

    /// Runs `code` (`python3 -c code arguments...`), named in errors by its first line.
    /// - Throws: ``ReferenceScriptError``.
    @discardableResult
    public static func run(code: String, arguments: [String] = [], input: Data? = nil) throws -> Output {
        let first = code.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return try python(["-c", code] + arguments, what: "python3 -c '\(first)'", input: input)
    }

    /// Runs another reference tool found on the PATH (`sox`, `ffmpeg`, `ffprobe`): `arguments[0]`
    /// with the rest, `input` on its standard input.
    /// - Throws: ``ReferenceScriptError/toolMissing(_:)``, ``ReferenceScriptError/failed(script:status:standardError:)``.
    @discardableResult
    public static func runTool(_ arguments: [String], input: Data? = nil) throws -> Output {
        let (status, output, stderr) = try spawn(arguments, input: input)
        if status == 127, stderr.contains(arguments[0]) { throw ReferenceScriptError.toolMissing(arguments[0]) }
        guard status == 0 else {
            throw ReferenceScriptError.failed(script: arguments.joined(separator: " "), status: status, standardError: stderr)
        }
        return output
    }

    private static func python(_ arguments: [String], what: String, input: Data?) throws -> Output {
        let (status, output, stderr) = try spawn(["python3"] + arguments, input: input)
        if status == 127, stderr.contains("python3") { throw ReferenceScriptError.pythonMissing }
        guard status == 0 else {
            if let module = missingModule(stderr) { throw ReferenceScriptError.moduleMissing(module: module, script: what) }
            throw ReferenceScriptError.failed(script: what, status: status, standardError: stderr)
        }
        return output
    }

    /// Runs `arguments` through `/usr/bin/env`: the exit status (128 + the signal when killed),
    /// the standard output and the standard error.
    private static func spawn(_ arguments: [String], input: Data?) throws -> (Int32, Output, String) {
        // Standard input and error go through files, so that no full pipe can block the tool
        // while this thread reads its standard output.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reference-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inputFile = scratch.appendingPathComponent("stdin"), errorFile = scratch.appendingPathComponent("stderr")
        try (input ?? Data()).write(to: inputFile)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = try FileHandle(forReadingFrom: inputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = String(decoding: (try? Data(contentsOf: errorFile)) ?? Data(), as: UTF8.self)
        let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        return (status, Output(data: data), stderr)
    }

    /// The module a `ModuleNotFoundError: No module named 'x'` names (its top-level package).
    static func missingModule(_ stderr: String) -> String? {
        guard let range = stderr.range(of: "No module named '") else { return nil }
        let rest = stderr[range.upperBound...]
        guard let end = rest.firstIndex(of: "'") else { return nil }
        return String(rest[..<end].split(separator: ".").first ?? "")
    }
}

/// Why a reference script gave no result. Each description's first line says what happened and
/// what to install; ``failed(script:status:standardError:)`` adds the script's error output.
public enum ReferenceScriptError: Error, Equatable, CustomStringConvertible {
    /// No script at `path`.
    case scriptMissing(path: String)
    /// `python3` is not on the PATH.
    case pythonMissing
    /// The tool (`sox`, `ffmpeg`) is not on the PATH.
    case toolMissing(String)
    /// The script imports a module that is not installed.
    case moduleMissing(module: String, script: String)
    /// The script exited with `status` (or was killed), printing `standardError`.
    case failed(script: String, status: Int32, standardError: String)

    public var description: String {
        switch self {
        case .scriptMissing(let path): return "the reference script \(path) does not exist"
        case .pythonMissing: return "python3 is not installed (make deps installs it with numpy and scipy)"
        case .toolMissing(let tool): return "\(tool) is not installed (make deps installs the reference tools)"
        case let .moduleMissing(module, script):
            return "\(script) needs the Python module '\(module)', which is not installed (make deps-python installs it)"
        case let .failed(script, status, standardError):
            let last = standardError.split(separator: "\n").last.map(String.init) ?? ""
            return "\(script) failed (status \(status)): \(last)\(standardError.isEmpty ? "" : "\n" + standardError)"
        }
    }
}
