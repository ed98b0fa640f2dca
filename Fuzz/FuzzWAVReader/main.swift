// libFuzzer entry point: arbitrary bytes as a WAV file, through both readers (WAVFile and libsndfile's).
import AudioGraphKit
import AudioGraphTesting
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where each input is written for the libsndfile reader (tmpfs, one file per process).
private let scratchPath = "/dev/shm/ag-fuzz-wav-\(getpid()).wav"

/// One input: parsed in memory by `WAVFile(data:)` (the tests' reader), then written to a file
/// and opened with `AudioFileReader.info` and read with `AudioFileReader.read` (what players and the
/// graph validator use), capped at 1 s of audio so a header that claims hours does not measure
/// the allocator. Errors are the expected outcome; a crash, a trap or a sanitizer report is a finding.
func fuzzWAVReader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    _ = try? WAVFile(data: Data(buffer: bytes))
    let fd = open(scratchPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { return 0 }
    _ = write(fd, data, size)
    close(fd)
    if let info = try? AudioFileReader.info(path: scratchPath) {
        _ = try? AudioFileReader.read(path: scratchPath, frameCount: min(info.frames, 48000))
    }
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
exit(LLVMFuzzerRunDriver(&argc, &argv, { fuzzWAVReader($0, $1) }))
