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
            guard case HRTFSet.Error.cannotOpen(let path, let code)? = error as? HRTFSet.Error else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(path, "/nonexistent/x.sofa")
            XCTAssertNotEqual(code, 0)
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
}
