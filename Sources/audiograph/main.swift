// `audiograph`: renders a plain `render` command line itself and hands every other command line to `audiograph-tool`.
//
// This executable links neither Foundation nor swift-argument-parser, so a render starts as fast as
// SoX does (Docs/Performance.md "Start-up: a render without Foundation"); `audiograph-tool`, built
// beside it, has every subcommand, the help and the usage errors.
import AudioGraphCommandLine
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A file past the size limit (RLIMIT_FSIZE) makes the write fail (EFBIG) instead of killing the
// process: the command reports it and removes its temporary files.
signal(SIGXFSZ, SIG_IGN)

if let job = RenderJob(plainArguments: Array(CommandLine.arguments.dropFirst())) {
    do {
        try job.run()
        exit(0)
    } catch {
        exit(error.status)
    }
}
ToolHandOff.exec()
