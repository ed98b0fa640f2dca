// Entry point of the `audiograph` command line: parse, run, map errors to the spec's exit codes.
import ArgumentParser
import Foundation

/// Exit statuses of the spec: 0 success, 1 invalid graph or input file, 2 wrong command line,
/// 3 runtime failure.
enum ExitStatus {
    static let invalidInput: Int32 = 1
    static let usage: Int32 = 2
    static let runtime: Int32 = 3
}

// A file past the size limit (RLIMIT_FSIZE) makes the write fail (EFBIG) instead of killing the
// process: the command reports it and removes its temporary files.
signal(SIGXFSZ, SIG_IGN)

do {
    // A plain `render` command line runs without swift-argument-parser's reflection (RenderJob).
    if let job = RenderJob(plainArguments: Array(CommandLine.arguments.dropFirst())) {
        try job.run()
    } else {
        var command = try AudioGraphCommand.parseAsRoot()
        try command.run()
    }
} catch let exit as ExitCode {
    Foundation.exit(exit.rawValue)
} catch {
    let code = AudioGraphCommand.exitCode(for: error)
    if code == .success {
        // --help, --version
        AudioGraphCommand.exit(withError: error)
    }
    // swift-argument-parser uses 64 for usage errors; the spec says 2. One line, with the usage hint.
    let message = AudioGraphCommand.message(for: error)
    let first = message.split(separator: "\n").first.map(String.init) ?? "invalid command line"
    FileHandle.standardError.write(Data(("audiograph: " + first + " (run 'audiograph help' for usage)\n").utf8))
    Foundation.exit(code == .validationFailure || code.rawValue == 64 ? ExitStatus.usage : code.rawValue)
}
