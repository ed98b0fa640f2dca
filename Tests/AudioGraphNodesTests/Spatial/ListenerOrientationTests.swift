// Tests of the listener's forward/up/right vectors from yaw, pitch and roll.

import Foundation
import XCTest
@testable import AudioGraphNodes

final class ListenerOrientationTests: XCTestCase {
    private func assertVector(_ v: Vector3, _ e: Vector3, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(v.x, e.x, accuracy: 1e-12, "\(what).x", file: file, line: line)
        XCTAssertEqual(v.y, e.y, accuracy: 1e-12, "\(what).y", file: file, line: line)
        XCTAssertEqual(v.z, e.z, accuracy: 1e-12, "\(what).z", file: file, line: line)
    }

    func testDefaultFacesMinusZWithYUp() {
        let o = ListenerOrientation()
        assertVector(o.forward, Vector3(0, 0, -1), "forward")
        assertVector(o.up, Vector3(0, 1, 0), "up")
        assertVector(o.right, Vector3(1, 0, 0), "right")
    }

    func testPositiveYawTurnsLeft() {
        for yaw in [30.0, 90, -90, 180, -45] {
            let t = yaw * .pi / 180
            let o = ListenerOrientation(yaw: yaw)
            // Rotation about +Y: forward (0,0,-1) -> (-sin t, 0, -cos t), right (1,0,0) -> (cos t, 0, -sin t).
            assertVector(o.forward, Vector3(-sin(t), 0, -cos(t)), "forward yaw \(yaw)")
            assertVector(o.right, Vector3(cos(t), 0, -sin(t)), "right yaw \(yaw)")
            assertVector(o.up, Vector3(0, 1, 0), "up yaw \(yaw)")
        }
        assertVector(ListenerOrientation(yaw: 90).forward, Vector3(-1, 0, 0), "yaw 90 faces -X (left)")
    }

    func testPositivePitchLooksUp() {
        let t = 30.0 * .pi / 180
        let o = ListenerOrientation(pitch: 30)
        assertVector(o.forward, Vector3(0, sin(t), -cos(t)), "forward")
        assertVector(o.up, Vector3(0, cos(t), sin(t)), "up")
        assertVector(o.right, Vector3(1, 0, 0), "right")
    }

    func testPositiveRollTiltsHeadRight() {
        let t = 30.0 * .pi / 180
        let o = ListenerOrientation(roll: 30)
        assertVector(o.up, Vector3(sin(t), cos(t), 0), "up")
        assertVector(o.right, Vector3(cos(t), -sin(t), 0), "right")
        assertVector(o.forward, Vector3(0, 0, -1), "forward")
    }

    func testYawThenPitchThenRollInTheListenersFrame() {
        // Yaw 90 (facing -X, right axis now (0,0,-1)), then pitch 45 about that right axis:
        // forward tilts from -X towards +Y, up tilts from +Y towards +X (worked by hand).
        let c = cos(Double.pi / 4), s = sin(Double.pi / 4)
        let o = ListenerOrientation(yaw: 90, pitch: 45)
        assertVector(o.forward, Vector3(-c, s, 0), "forward")
        assertVector(o.right, Vector3(0, 0, -1), "right")
        assertVector(o.up, Vector3(c, s, 0), "up")
        // Then roll 90 about that forward: the head's top goes to the former right side.
        let r = ListenerOrientation(yaw: 90, pitch: 45, roll: 90)
        assertVector(r.forward, Vector3(-c, s, 0), "forward after roll")
        assertVector(r.up, Vector3(0, 0, -1), "up after roll = former right")
        assertVector(r.right, Vector3(-c, -s, 0), "right after roll = former down")
    }

    func testListenerRelativeCoordinates() {
        let o = ListenerOrientation(yaw: 90)
        // Facing -X: a source at world (-2,0,0) is 2 m ahead (listener z = -2); at world (0,0,-1)
        // it is 1 m to the right.
        assertVector(o.listenerRelative(Vector3(-2, 0, 0)), Vector3(0, 0, -2), "ahead")
        assertVector(o.listenerRelative(Vector3(0, 0, -1)), Vector3(1, 0, 0), "right")
        assertVector(o.listenerRelative(Vector3(0, 3, 0)), Vector3(0, 3, 0), "above")
    }

    /// Web Audio listener vectors as the unrotated frame: right = forward × up, up' = right × forward.
    func testForwardAndUpVectorsAreTheUnrotatedFrame() {
        // The default vectors give exactly the yaw/pitch/roll frame.
        for o in [ListenerOrientation(), ListenerOrientation(yaw: 37, pitch: -12, roll: 81)] {
            let a = o.axes(forward: Vector3(0, 0, -1), up: Vector3(0, 1, 0)), b = o.axes
            XCTAssertEqual([a.right, a.up, a.forward], [b.right, b.up, b.forward])
        }
        // Facing +X with a tilted, too long up vector: up is made perpendicular.
        let a = ListenerOrientation().axes(forward: Vector3(2, 0, 0), up: Vector3(1, 3, 0))
        assertVector(a.forward, Vector3(1, 0, 0), "forward")
        assertVector(a.right, Vector3(0, 0, 1), "right")
        assertVector(a.up, Vector3(0, 1, 0), "up")
        // Yaw 90 then turns that listener to its left (-Z); pitch 90 makes it look along its up.
        assertVector(ListenerOrientation(yaw: 90).axes(forward: Vector3(1, 0, 0), up: Vector3(0, 1, 0)).forward,
                     Vector3(0, 0, -1), "yawed forward")
        let pitched = ListenerOrientation(pitch: 90).axes(forward: Vector3(0, 0, -1), up: Vector3(1, 0, 0))
        assertVector(pitched.forward, Vector3(1, 0, 0), "pitched forward")
        // No frame (zero or parallel vectors): the default frame.
        for (f, u) in [(Vector3.zero, Vector3(0, 1, 0)), (Vector3(0, 1, 0), Vector3(0, -3, 0)), (Vector3(1, 0, 0), .zero)] {
            let d = ListenerOrientation().axes(forward: f, up: u)
            assertVector(d.forward, Vector3(0, 0, -1), "degenerate forward")
            assertVector(d.up, Vector3(0, 1, 0), "degenerate up")
        }
    }
}
