// Tests of the Web Audio distance models against their formulas.

import Foundation
import XCTest
@testable import AudioGraphNodes

final class DistanceModelGainTests: XCTestCase {
    func testInverse() {
        let m = DistanceModel(model: .inverse, referenceDistance: 2, maxDistance: 100, rolloffFactor: 1.5)
        for d in [0.0, 1, 2, 3, 10, 1000] {
            let expected = 2 / (2 + 1.5 * (max(d, 2) - 2))
            XCTAssertEqual(m.gain(distance: d), expected, accuracy: 1e-15, "d=\(d)")
        }
        XCTAssertEqual(DistanceModel().gain(distance: 2), 0.5, accuracy: 1e-15)
        XCTAssertEqual(DistanceModel().gain(distance: 0.5), 1, accuracy: 1e-15)
    }

    func testExponential() {
        let m = DistanceModel(model: .exponential, referenceDistance: 2, maxDistance: 100, rolloffFactor: 1.5)
        for d in [0.0, 2, 3, 10, 1000] {
            XCTAssertEqual(m.gain(distance: d), pow(max(d, 2) / 2, -1.5), accuracy: 1e-15, "d=\(d)")
        }
        XCTAssertEqual(m.gain(distance: 8), 0.125, accuracy: 1e-15) // (8/2)^-1.5 = 1/8
    }

    func testLinearClampsDistanceAndRolloff() {
        let m = DistanceModel(model: .linear, referenceDistance: 1, maxDistance: 11, rolloffFactor: 0.5)
        XCTAssertEqual(m.gain(distance: 0.2), 1, accuracy: 1e-15)          // below ref: clamped to ref
        XCTAssertEqual(m.gain(distance: 6), 1 - 0.5 * 5 / 10, accuracy: 1e-15)
        XCTAssertEqual(m.gain(distance: 50), 0.5, accuracy: 1e-15)         // beyond max: clamped to max
        // Rolloff above 1 clamps to 1: gain reaches 0 at max distance, never negative.
        let steep = DistanceModel(model: .linear, referenceDistance: 1, maxDistance: 11, rolloffFactor: 3)
        XCTAssertEqual(steep.gain(distance: 6), 0.5, accuracy: 1e-15)
        XCTAssertEqual(steep.gain(distance: 100), 0, accuracy: 1e-15)
        // Reference and maximum swapped: ref' = min, max' = max.
        let swapped = DistanceModel(model: .linear, referenceDistance: 11, maxDistance: 1, rolloffFactor: 1)
        XCTAssertEqual(swapped.gain(distance: 6), 0.5, accuracy: 1e-15)
        // Equal reference and maximum: 1 - rolloff.
        let equal = DistanceModel(model: .linear, referenceDistance: 5, maxDistance: 5, rolloffFactor: 0.25)
        XCTAssertEqual(equal.gain(distance: 3), 0.75, accuracy: 1e-15)
        XCTAssertEqual(equal.gain(distance: 30), 0.75, accuracy: 1e-15)
    }

    func testNone() {
        let m = DistanceModel(model: .none, referenceDistance: 1, maxDistance: 10, rolloffFactor: 1)
        for d in [0.0, 1, 5, 1e6] { XCTAssertEqual(m.gain(distance: d), 1) }
    }
}
