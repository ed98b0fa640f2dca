// libFuzzer entry point: arbitrary bytes as a WAV file, through the readers (WAVFile, WAVFileReader and libsndfile's), the last two compared.
import AudioGraphKit
import AudioGraphNodes
import AudioGraphTesting
import CSndFile
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where each input is written for the libsndfile reader (tmpfs, one file per process).
private let scratchPath = "/dev/shm/ag-fuzz-wav-\(getpid()).wav"

/// One input: parsed in memory by `WAVFile(data:)` (the tests' reader), then written to a file
/// and opened with `AudioFileReader.info` and read with `AudioFileReader.read` (what players and the
/// graph validator use: `WAVFileReader` for the WAV layouts it takes, else libsndfile), capped at
/// 1 s of audio so a header that claims hours does not measure the allocator. A file
/// `WAVFileReader` takes is also read by libsndfile, which must find the same rate, channels,
/// length and samples (bit for bit): a difference traps. Errors are the expected outcome; a
/// crash, a trap or a sanitizer report is a finding.
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
        // Opened (past WAVHeaderCheck, which keeps libsndfile away from the LIST chunks it would
        // parse forever) and read natively: libsndfile must agree.
        if let native = WAVFileReader.open(path: scratchPath) { compareWithLibsndfile(native) }
    }
    return 0
}

/// Traps when libsndfile reads `native`'s file differently (its first 4 096 frames).
func compareWithLibsndfile(_ native: WAVFileReader) {
    var info = SF_INFO()
    guard let file = sf_open(scratchPath, Int32(SFM_READ), &info) else {
        fatalError("WAVFileReader takes a file libsndfile refuses: \(String(cString: sf_strerror(nil)))")
    }
    defer { sf_close(file) }
    let theirs = AudioFileInfo(sampleRate: Double(info.samplerate), channels: Int(info.channels), frames: info.frames)
    precondition(native.info == theirs, "WAVFileReader reads \(native.info), libsndfile \(theirs)")
    let frames = Int(min(info.frames, 4096)), ch = Int(info.channels)
    var a = [Float](repeating: 0, count: frames * ch), b = a
    let gotA = a.withUnsafeMutableBufferPointer { native.read(into: $0.baseAddress!, atFrame: 0, frameCount: frames) }
    let gotB = b.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, Int64(frames)) }
    precondition(gotA == Int(gotB), "WAVFileReader reads \(gotA) frames, libsndfile \(gotB)")
    for i in 0..<(gotA * ch) where a[i].bitPattern != b[i].bitPattern {
        fatalError("sample \(i): WAVFileReader reads \(a[i]), libsndfile \(b[i])")
    }
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
