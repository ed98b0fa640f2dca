// libFuzzer entry point: bytes as a graph file (raw text, or a structure-aware graph that is then rendered).
import AudioGraphKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How far the inputs got, printed at exit: the share of inputs that load and that render.
let printRefusals = ProcessInfo.processInfo.environment["FUZZ_PRINT_REFUSALS"] != nil
nonisolated(unsafe) var counts = (raw: 0, rawLoaded: 0, structured: 0, structuredLoaded: 0, rendered: 0)

/// One input. The first byte picks the mode:
/// - `{`, `[`, space or newline: the input is graph-file text, parsed and validated as
///   `GraphLoader.parse` does for a file (relative sound-file paths resolve against a directory
///   that does not exist, so probing a named file fails cleanly instead of reading the
///   machine's files);
/// - anything else: the rest drives ``GraphGrammar``, whose graph is parsed, validated and
///   rendered offline (0.01 s) to a temporary file, then removed.
/// Errors are the expected outcome; a crash, a trap or a sanitizer report is a finding.
func fuzzGraphLoader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    // JSON-looking inputs (the seeds, Graphs/*.json, and their mutations) are texts.
    if [UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: " "), UInt8(ascii: "\n")].contains(data[0]) {
        counts.raw += 1
        let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
        if (try? GraphLoader.parse(text: text, fileName: "fuzz.json", baseDirectory: "/nonexistent-fuzz-base")) != nil {
            counts.rawLoaded += 1
        }
        return 0
    }
    counts.structured += 1
    var grammar = GraphGrammar(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let text = grammar.graphText()
    let validated: ValidatedGraph
    do {
        validated = try GraphLoader.parse(text: text, fileName: "fuzz.json", baseDirectory: "/nonexistent-fuzz-base")
    } catch {
        // FUZZ_PRINT_REFUSALS=1: why grammar graphs fail to load (to tune the grammar).
        if printRefusals { FileHandle.standardError.write(Data(("refused: " + (error.lines.first ?? "") + "\n").utf8)) }
        return 0
    }
    counts.structuredLoaded += 1
    let path = "/tmp/audiograph-fuzz-\(getpid()).wav"
    defer { unlink(path) }
    do {
        let renderer = try OfflineRenderer(validated, outputPath: path, renderThreads: 1)
        try renderer.render(to: path)
        counts.rendered += 1
    } catch {}
    return 0
}

// libFuzzer's own driver (flags, corpus directories, -max_total_time), called from this
// executable's main: SwiftPM links executables with their Swift entry point as `main`, so
// libFuzzer's `main` is not used.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

atexit {
    let c = counts
    func share(_ a: Int, _ b: Int) -> String { b == 0 ? "-" : String(format: "%.1f %%", 100 * Double(a) / Double(b)) }
    let line = "FuzzGraphLoader reach: raw texts \(c.raw), loaded \(c.rawLoaded) (\(share(c.rawLoaded, c.raw))); "
        + "structured \(c.structured), loaded \(c.structuredLoaded) (\(share(c.structuredLoaded, c.structured))), "
        + "rendered \(c.rendered) (\(share(c.rendered, c.structured)))\n"
    FileHandle.standardError.write(line.data(using: .utf8)!)
}
var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, { fuzzGraphLoader($0, $1) }))
