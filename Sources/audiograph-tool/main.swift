// Entry point of `audiograph-tool`, every command of the `audiograph` command line (which execs it for all
// but a plain render): parse, run, map errors to the spec's exit codes.
import ArgumentParser
import AudioGraphCommandLine
import Foundation

// A file past the size limit (RLIMIT_FSIZE) makes the write fail (EFBIG) instead of killing the
// process: the command reports it and removes its temporary files.
signal(SIGXFSZ, SIG_IGN)

do {
    var command = try AudioGraphCommand.parseAsRoot()
    try command.run()
} catch let exit as ExitCode {
    Foundation.exit(exit.rawValue)
} catch let failure as CommandFailure {
    Foundation.exit(failure.status)
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
