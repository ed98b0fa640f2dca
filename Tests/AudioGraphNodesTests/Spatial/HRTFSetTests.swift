// Tests of loading a SOFA HRTF set through libmysofa and looking up directions.

import CMySofa
import Foundation
import XCTest
@testable import AudioGraphNodes

final class HRTFSetTests: XCTestCase {
    func testLoadsTheDefaultSetAtTheGraphRate() throws {
        let set = try HRTFSet.shared(sampleRate: 48000)
        XCTAssertTrue(try HRTFSet.shared(sampleRate: 48000) === set, "loaded once, then shared")
        // What libmysofa itself reports for the same file and rate.
        var length: Int32 = 0, err: Int32 = 0
        let easy = try XCTUnwrap(mysofa_open(HRTFSet.defaultPath, 48000, &length, &err))
        defer { mysofa_close(easy) }
        XCTAssertEqual(set.measurementCount, Int(easy.pointee.hrtf.pointee.M))
        XCTAssertEqual(set.sofaFilterLength, Int(length))
        XCTAssertGreaterThanOrEqual(set.filterLength, set.sofaFilterLength)
        XCTAssertEqual(set.partitionCount, (set.filterLength + 127) / 128)
        // The Debian symlink default.sofa opens too.
        let viaDefault = try HRTFSet(path: "/usr/share/libmysofa/default.sofa", sampleRate: 44100)
        XCTAssertEqual(viaDefault.measurementCount, set.measurementCount)
        XCTAssertLessThan(viaDefault.sofaFilterLength, set.sofaFilterLength) // 44.1 kHz: fewer taps
    }

    func testMissingFileIsAnError() {
        XCTAssertThrowsError(try HRTFSet(path: "/nonexistent/x.sofa", sampleRate: 48000)) { error in
            XCTAssertEqual(error as? HRTFSet.Error, .notSOFA(path: "/nonexistent/x.sofa", reason: "no such file"))
        }
    }

    /// A file that is no HDF5 file never reaches libmysofa (which would report only an error code).
    func testAFileWithoutTheHDF5SignatureIsRefused() throws {
        let path = NSTemporaryDirectory() + "hrtfset-\(getpid()).sofa"
        defer { unlink(path) }
        // The Debian set with its 8-byte signature changed in one byte.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: HRTFSet.defaultPath))
        bytes[1] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try HRTFSet(path: path, sampleRate: 44100)) { error in
            XCTAssertEqual(error as? HRTFSet.Error, .notSOFA(path: path, reason: "not a SOFA file (no HDF5 signature)"))
        }
        // The same bytes with the signature intact load.
        bytes[1] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try HRTFSet(path: path, sampleRate: 44100).measurementCount, 710)
    }

    /// The SOFA fuzzer's 30-minute run found a file that kept `mysofa_open` busy for minutes (over
    /// 120 s, in libmysofa's neighbourhood search): the Debian set with its positions relabelled
    /// cartesian and some of their bytes changed. The positions are now checked before libmysofa
    /// searches them (the fuzzer's file: refused in 0.3 s). Here: the relabelling alone, which puts
    /// azimuths of up to 355 degrees 355 m away — refused, where the old code loaded it.
    func testSourcePositionsFarAwayAreRefusedBeforeLibmysofaSearchesThem() throws {
        let path = NSTemporaryDirectory() + "hrtfset-far-\(getpid()).sofa"
        defer { unlink(path) }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: HRTFSet.defaultPath))
        let spherical = Data("spherical".utf8)
        let range = try XCTUnwrap(bytes.range(of: spherical), "the Debian set names its positions spherical")
        bytes.replaceSubrange(range, with: Data("cartesian".utf8))
        try bytes.write(to: URL(fileURLWithPath: path))
        let start = Date()
        XCTAssertThrowsError(try HRTFSet(path: path, sampleRate: 48000)) { error in
            guard case .malformed(let p, let reason) = error as? HRTFSet.Error else { return XCTFail("\(error)") }
            XCTAssertEqual(p, path)
            XCTAssertTrue(reason.hasPrefix("source position ") && reason.hasSuffix("m away (at most 100 m)"), reason)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "refused before the neighbourhood search")
    }

    /// A FIFO is refused at once: libmysofa's fopen would wait for a writer. A writer that opens
    /// the FIFO after 2 s (non-blocking, so it gives up when nobody reads) ends the wait of a
    /// loader that does open it, which then fails on the time and the error.
    func testAFIFOIsRefusedWithoutBlocking() throws {
        let path = NSTemporaryDirectory() + "hrtfset-\(getpid()).fifo"
        unlink(path)
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        defer { unlink(path) }
        let writer = Thread {
            Thread.sleep(forTimeInterval: 2)
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { _ = write(fd, "not hdf5", 8); close(fd) }
        }
        writer.start()
        let start = Date()
        XCTAssertThrowsError(try HRTFSet(path: path, sampleRate: 48000)) { error in
            XCTAssertEqual(error as? HRTFSet.Error,
                           .notSOFA(path: path, reason: "it is a FIFO (named pipe), not a regular file"))
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
    }

    /// Found by `FuzzSOFAReader`: a file whose `Data.Delay` variable is missing (here renamed)
    /// passes libmysofa's own `mysofa_check`, and `mysofa_getfilter_float_nointerp` then reads the
    /// delays through a null pointer. The set is refused before any filter is read.
    func testASetWithoutDataDelayIsRefused() throws {
        let path = NSTemporaryDirectory() + "hrtfset-nodelay-\(getpid()).sofa"
        defer { unlink(path) }
        let original = try Data(contentsOf: URL(fileURLWithPath: HRTFSet.defaultPath))
        let name = Data("Data.Delay".utf8)
        let range = try XCTUnwrap(original.range(of: name))
        XCTAssertNil(original[range.upperBound...].range(of: name), "one occurrence")
        var bytes = original
        bytes[range.upperBound - 1] = UInt8(ascii: "z")
        try bytes.write(to: URL(fileURLWithPath: path))
        // What libmysofa itself makes of it: loaded and checked without error, no delays.
        var err: Int32 = 0
        let hrtf = try XCTUnwrap(mysofa_load(path, &err))
        defer { mysofa_free(hrtf) }
        XCTAssertEqual(err, Int32(MYSOFA_OK))
        XCTAssertEqual(mysofa_check(hrtf), Int32(MYSOFA_OK))
        XCTAssertNil(hrtf.pointee.DataDelay.values)
        XCTAssertEqual(hrtf.pointee.DataDelay.elements, 0)

        XCTAssertThrowsError(try HRTFSet(path: path, sampleRate: 44100)) { error in
            XCTAssertEqual(error as? HRTFSet.Error,
                           .malformed(path: path, reason: "Data.Delay has 0 values, not 2 or 710 x 2"))
        }
    }

    func testSofaCoordinates() {
        // Ours: x right, y up, z behind. SOFA: x forward, y left, z up.
        XCTAssertEqual(HRTFSet.sofaCoordinates(Vector3(0, 0, -1)), Vector3(1, 0, 0))  // ahead
        XCTAssertEqual(HRTFSet.sofaCoordinates(Vector3(1, 0, 0)), Vector3(0, -1, 0))  // right
        XCTAssertEqual(HRTFSet.sofaCoordinates(Vector3(-1, 0, 0)), Vector3(0, 1, 0))  // left
        XCTAssertEqual(HRTFSet.sofaCoordinates(Vector3(0, 1, 0)), Vector3(0, 0, 1))   // above
    }

    func testNearestMeasurementMatchesLibmysofa() throws {
        let set = try HRTFSet.shared(sampleRate: 48000)
        var length: Int32 = 0, err: Int32 = 0
        let easy = try XCTUnwrap(mysofa_open(HRTFSet.defaultPath, 48000, &length, &err))
        defer { mysofa_close(easy) }
        let n = Int(length)
        var l = [Float](repeating: 0, count: n), r = [Float](repeating: 0, count: n)
        // Directions in our frame, including off-grid ones.
        let directions = [Vector3(1, 0, 0), Vector3(-1, 0, 0), Vector3(0, 0, -1), Vector3(0, 0, 1),
                          Vector3(0.3, 0.2, -1), Vector3(-2, 1, 1.5), Vector3(0.1, 1, 0.05)]
        for d in directions {
            let s = HRTFSet.sofaCoordinates(d)
            var dl: Float = 0, dr: Float = 0
            mysofa_getfilter_float_nointerp(easy, Float(s.x), Float(s.y), Float(s.z), &l, &r, &dl, &dr)
            let m = set.nearestMeasurement(to: d)
            let ours = set.impulseResponse(measurement: m, ear: 0), oursR = set.impulseResponse(measurement: m, ear: 1)
            XCTAssertEqual(set.delay(measurement: m, ear: 0), Int((Double(dl) * 48000).rounded()))
            for i in 0..<n {
                XCTAssertEqual(ours[i], l[i], "left tap \(i) for \(d)")
                XCTAssertEqual(oursR[i], r[i], "right tap \(i) for \(d)")
                if ours[i] != l[i] || oursR[i] != r[i] { break }
            }
        }
        // The measurement at +90 degrees is within a degree of straight right.
        let right = set.direction(ofMeasurement: set.nearestMeasurement(to: Vector3(5, 0, 0)))
        XCTAssertGreaterThan(right.x, cos(1 * Double.pi / 180))
    }

    /// A libmysofa that cannot be loaded (the loader's test hook marks it missing) is a one-line
    /// error naming the library, not the trampoline's abort.
    func testAMissingLibmysofaIsAOneLineError() {
        setenv("AG_LAZY_LIBRARY_MISSING", "libmysofa.so.1", 1)
        defer { unsetenv("AG_LAZY_LIBRARY_MISSING") }
        XCTAssertThrowsError(try HRTFSet(path: HRTFSet.defaultPath, sampleRate: 48000)) { error in
            XCTAssertEqual(error as? HRTFSet.Error,
                           .libraryMissing(library: "libmysofa", reason: "libmysofa.so.1: cannot open shared object file (AG_LAZY_LIBRARY_MISSING)"))
            XCTAssertEqual("\(error)", "cannot load libmysofa: libmysofa.so.1: cannot open shared object file (AG_LAZY_LIBRARY_MISSING)")
        }
    }
}
