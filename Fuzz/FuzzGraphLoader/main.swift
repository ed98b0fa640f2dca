// libFuzzer entry point: arbitrary bytes as a graph file, through the loader and validator.
import AudioGraphKit
#if canImport(Glibc)
import Glibc
#endif

/// One input: the bytes as UTF-8 graph text, parsed and validated as `GraphLoader.parse` does
/// for a file (relative sound-file paths resolve against a directory that does not exist, so
/// probing a named file fails cleanly instead of reading the machine's files). Errors are the
/// expected outcome; a crash, a trap or a sanitizer report is a finding.
func fuzzGraphLoader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? GraphLoader.parse(text: text, fileName: "fuzz.json", baseDirectory: "/nonexistent-fuzz-base")
    return 0
}

// libFuzzer's own driver (flags, corpus directories, -max_total_time), called from this
// executable's main: SwiftPM links executables with their Swift entry point as `main`, so
// libFuzzer's `main` is not used.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, { fuzzGraphLoader($0, $1) }))
