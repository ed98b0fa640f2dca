// Tests of the Web Audio azimuth/elevation algorithm and equal-power gains, listener fixed and turned.

import Foundation
import XCTest
@testable import AudioGraphNodes

final class WebAudioPanningTests: XCTestCase {
    /// The expected azimuth of a source in the listener's horizontal plane, written directly:
    /// with (r, b) its coordinates along the listener's right and back axes, atan2(r, -b).
    private func horizontalAzimuth(right r: Double, back b: Double) -> Double { atan2(r, -b) * 180 / .pi }

    /// The equal-power gains written from the spec text, independent of the implementation.
    private func expectedGains(_ azimuth: Double) -> (Double, Double) {
        var a = azimuth
        if a < -90 { a = -180 - a } else if a > 90 { a = 180 - a }
        let x = (a + 90) / 180
        return (cos(x * .pi / 2), sin(x * .pi / 2))
    }

    private func angles(_ source: Vector3, _ o: ListenerOrientation = .init(), listener: Vector3 = .zero) -> (Double, Double) {
        let r = WebAudioPanning.azimuthElevation(source: source, listenerPosition: listener, forward: o.forward, up: o.up)
        return (r.azimuth, r.elevation)
    }

    func testDefaultListenerAheadLeftRightBehindAbove() {
        var (az, el) = angles(Vector3(0, 0, -2))
        XCTAssertEqual(az, 0, accuracy: 1e-9); XCTAssertEqual(el, 0, accuracy: 1e-9)
        (az, el) = angles(Vector3(-3, 0, 0))
        XCTAssertEqual(az, -90, accuracy: 1e-9)
        (az, el) = angles(Vector3(5, 0, 0))
        XCTAssertEqual(az, 90, accuracy: 1e-9)
        (az, el) = angles(Vector3(0, 0, 4))
        XCTAssertEqual(abs(az), 180, accuracy: 1e-9)
        (az, el) = angles(Vector3(2, 0, -2))
        XCTAssertEqual(az, horizontalAzimuth(right: 2, back: -2), accuracy: 1e-9)
        (az, el) = angles(Vector3(-1, 0, 1))
        XCTAssertEqual(az, horizontalAzimuth(right: -1, back: 1), accuracy: 1e-9) // -135
        (az, el) = angles(Vector3(0, 3, 0))
        XCTAssertEqual(el, 90, accuracy: 1e-9)
        (az, el) = angles(Vector3(0, 1, -1))
        XCTAssertEqual(az, 0, accuracy: 1e-9); XCTAssertEqual(el, 45, accuracy: 1e-9)
        (az, el) = angles(Vector3(1, -1, 0))
        XCTAssertEqual(az, 90, accuracy: 1e-9); XCTAssertEqual(el, -45, accuracy: 1e-9)
        // Listener moved: only the offset counts.
        (az, el) = angles(Vector3(11, 0, 10), listener: Vector3(10, 0, 10))
        XCTAssertEqual(az, 90, accuracy: 1e-9)
        // A source on the listener gives (0, 0).
        (az, el) = angles(Vector3(1, 2, 3), listener: Vector3(1, 2, 3))
        XCTAssertEqual(az, 0); XCTAssertEqual(el, 0)
    }

    func testEqualPowerGainsMatchTheSpec() {
        for az in stride(from: -180.0, through: 180, by: 7.5) {
            let g = WebAudioPanning.equalPowerGains(azimuth: az)
            let e = expectedGains(az)
            XCTAssertEqual(g.left, e.0, accuracy: 1e-12, "az \(az)")
            XCTAssertEqual(g.right, e.1, accuracy: 1e-12, "az \(az)")
            XCTAssertEqual(g.left * g.left + g.right * g.right, 1, accuracy: 1e-12, "constant power at \(az)")
        }
        let ahead = WebAudioPanning.equalPowerGains(azimuth: 0)
        XCTAssertEqual(ahead.left, 0.70710678, accuracy: 1e-8)
        XCTAssertEqual(ahead.right, 0.70710678, accuracy: 1e-8)
        let left = WebAudioPanning.equalPowerGains(azimuth: -90)
        XCTAssertEqual(left.left, 1, accuracy: 1e-12); XCTAssertEqual(left.right, 0, accuracy: 1e-12)
        // Behind-left folds to front-left: -135 behaves as -45.
        let rear = WebAudioPanning.equalPowerGains(azimuth: -135)
        XCTAssertEqual(rear.left, cos(Double.pi / 8), accuracy: 1e-12)
        XCTAssertEqual(rear.right, sin(Double.pi / 8), accuracy: 1e-12)
    }

    func testTurnedListenerYaw() {
        // Yaw +90: facing -X. World -X is ahead, world -Z is to the right, world +Z to the left.
        let left90 = ListenerOrientation(yaw: 90)
        XCTAssertEqual(angles(Vector3(-1, 0, 0), left90).0, 0, accuracy: 1e-9)
        XCTAssertEqual(angles(Vector3(0, 0, -1), left90).0, 90, accuracy: 1e-9)
        XCTAssertEqual(angles(Vector3(0, 0, 1), left90).0, -90, accuracy: 1e-9)
        // Yaw -90: facing +X. World -Z is to the left.
        let right90 = ListenerOrientation(yaw: -90)
        XCTAssertEqual(angles(Vector3(0, 0, -1), right90).0, -90, accuracy: 1e-9)
        XCTAssertEqual(angles(Vector3(3, 0, 0), right90).0, 0, accuracy: 1e-9)
        // Yaw 180: facing +Z; world +X is on the left, world -Z behind.
        let back = ListenerOrientation(yaw: 180)
        XCTAssertEqual(angles(Vector3(1, 0, 0), back).0, -90, accuracy: 1e-9)
        XCTAssertEqual(abs(angles(Vector3(0, 0, -1), back).0), 180, accuracy: 1e-9)
        // Yaw 30: a source 30 degrees to the left of -Z is now straight ahead.
        let t = 30.0 * .pi / 180
        XCTAssertEqual(angles(Vector3(-sin(t), 0, -cos(t)), ListenerOrientation(yaw: 30)).0, 0, accuracy: 1e-9)
    }

    func testTurnedListenerPitchAndRoll() {
        // Pitch +90: looking straight up. World +Y is ahead; world -Z (the old ahead) is below.
        let up = ListenerOrientation(pitch: 90)
        var (az, el) = angles(Vector3(0, 2, 0), up)
        XCTAssertEqual(az, 0, accuracy: 1e-9); XCTAssertEqual(el, 0, accuracy: 1e-9)
        (az, el) = angles(Vector3(0, 0, -1), up)
        XCTAssertEqual(el, -90, accuracy: 1e-9)
        (az, el) = angles(Vector3(1, 0, 0), up)
        XCTAssertEqual(az, 90, accuracy: 1e-9)
        // Pitch +30: the old ahead is 30 degrees below.
        (az, el) = angles(Vector3(0, 0, -1), ListenerOrientation(pitch: 30))
        XCTAssertEqual(az, 0, accuracy: 1e-9); XCTAssertEqual(el, -30, accuracy: 1e-9)
        // Roll +90 (head tilted right): world -Y is to the right, world +Y to the left, +X above.
        let tilted = ListenerOrientation(roll: 90)
        XCTAssertEqual(angles(Vector3(0, -1, 0), tilted).0, 90, accuracy: 1e-9)
        XCTAssertEqual(angles(Vector3(0, 1, 0), tilted).0, -90, accuracy: 1e-9)
        XCTAssertEqual(angles(Vector3(1, 0, 0), tilted).1, 90, accuracy: 1e-9)
        // Roll +30: world +X is 30 degrees above the ear axis, still on the right.
        (az, el) = angles(Vector3(1, 0, 0), ListenerOrientation(roll: 30))
        XCTAssertEqual(az, 90, accuracy: 1e-9); XCTAssertEqual(el, 30, accuracy: 1e-9)
    }

    func testConformanceCaseGains() {
        // environment_equal_power_inverse: (position, gain) -> expected (L, R).
        let cases: [(Vector3, Double, (Double, Double))] = [
            (Vector3(0, 0, -2), 1, (0.5 * 0.70710678, 0.5 * 0.70710678)),
            (Vector3(-3, 0, 0), 1, (1.0 / 3, 0)),
            (Vector3(2, 0, -2), 1, (cos(3 * Double.pi / 8) / 8.squareRoot(), sin(3 * Double.pi / 8) / 8.squareRoot())),
            (Vector3(-1, 0, 1), 0.5, (0.5 * cos(Double.pi / 8) / 2.squareRoot(), 0.5 * sin(Double.pi / 8) / 2.squareRoot())),
        ]
        for (p, gain, e) in cases {
            let az = angles(p).0
            let pan = WebAudioPanning.equalPowerGains(azimuth: az)
            let g = gain * DistanceModel().gain(distance: p.length)
            XCTAssertEqual(pan.left * g, e.0, accuracy: 1e-8, "\(p)")
            XCTAssertEqual(pan.right * g, e.1, accuracy: 1e-8, "\(p)")
        }
    }

    /// The stereo equal-power law, hand-evaluated at the points where its gains are simple.
    func testStereoEqualPowerMatrix() {
        func assertMatrix(_ azimuth: Double, _ e: [Double], line: UInt = #line) {
            let m = WebAudioPanning.equalPowerStereoMatrix(azimuth: azimuth)
            let got = [m.leftFromLeft, m.leftFromRight, m.rightFromLeft, m.rightFromRight]
            for k in 0..<4 { XCTAssertEqual(got[k], e[k], accuracy: 1e-12, "azimuth \(azimuth) entry \(k)", line: line) }
        }
        let h = sqrt(0.5)
        assertMatrix(0, [1, 0, 0, 1])          // ahead: passes unchanged
        assertMatrix(-90, [1, 1, 0, 0])        // hard left: both channels left
        assertMatrix(90, [0, 0, 1, 1])         // hard right
        assertMatrix(-45, [1, h, 0, h])        // x = 1/2
        assertMatrix(45, [h, 0, h, 1])
        assertMatrix(-135, [1, h, 0, h])       // behind left folds to -45
        assertMatrix(180, [1, 0, 0, 1])        // behind folds to ahead
    }

    /// The cone gain at hand-computed angles (inner 90°, outer 270°: halves 45° and 135°).
    func testConeGain() {
        func gain(_ orientation: Vector3, inner: Double = 90, outer: Double = 270, outerGain: Double = 0.2) -> Double {
            // Listener at the origin, source at (0, 0, -1): source to listener is +Z.
            WebAudioPanning.coneGain(sourcePosition: Vector3(0, 0, -1), orientation: orientation, listenerPosition: .zero,
                                     coneInnerAngle: inner, coneOuterAngle: outer, coneOuterGain: outerGain)
        }
        XCTAssertEqual(gain(Vector3(0, 0, 1)), 1, accuracy: 1e-12)            // facing the listener
        XCTAssertEqual(gain(Vector3(1, 0, 1)), 1, accuracy: 1e-12)            // 45°: the inner edge
        XCTAssertEqual(gain(Vector3(1, 0, 0)), 0.6, accuracy: 1e-12)          // 90°: halfway, 0.5 + 0.2·0.5
        XCTAssertEqual(gain(Vector3(0, 0, -7)), 0.2, accuracy: 1e-12)         // 180°: outside
        XCTAssertEqual(gain(Vector3(1, 0, -1)), 0.2, accuracy: 1e-12)         // 135°: the outer edge
        XCTAssertEqual(gain(Vector3(0, 0, -1), inner: 360, outer: 360), 1)    // no cone
        XCTAssertEqual(gain(.zero, inner: 10, outer: 20), 1)                  // no orientation
        // The listener at the source: the angle is 90°.
        XCTAssertEqual(WebAudioPanning.coneGain(sourcePosition: .zero, orientation: Vector3(0, 0, 1), listenerPosition: .zero,
                                                coneInnerAngle: 90, coneOuterAngle: 270, coneOuterGain: 0.2), 0.6, accuracy: 1e-12)
    }
}
