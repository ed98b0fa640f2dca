// libFuzzer entry point: arbitrary bytes as a SOFA (HDF5) file, through HRTFSet's loading path.
import AudioGraphKit

#if canImport(Glibc)
import Glibc
#endif

/// Where each input is written for libmysofa, which reads files only (tmpfs, one file per process).
private let scratchPath = "/dev/shm/ag-fuzz-sofa-\(getpid()).sofa"

/// One input: written to a file and loaded as the environment node loads an HRTF set, with the
/// graph checker's test first (`FileSystemPath.sofaProblem`: a regular file with the HDF5
/// signature), then `HRTFSet(path:sampleRate:)` (libmysofa's `mysofa_open`, then the per-direction
/// filters, delays and partition spectra). The rate is 44.1 kHz, the rate of the Debian seed, so
/// the seed loads without libmysofa's resampler (seconds per load under ASan); mutated rates still
/// resample. Errors are the expected outcome; a crash, a trap or a sanitizer report is a finding.
func fuzzSOFAReader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let fd = open(scratchPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { return 0 }
    _ = write(fd, data, size)
    close(fd)
    guard FileSystemPath.sofaProblem(scratchPath) == nil else { return 0 }
    if let set = try? HRTFSet(path: scratchPath, sampleRate: 44100) {
        _ = set.nearestMeasurement(to: Vector3(0.3, 0.2, -1))
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
exit(LLVMFuzzerRunDriver(&argc, &argv, { fuzzSOFAReader($0, $1) }))
