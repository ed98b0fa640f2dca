// The listener's head orientation from yaw, pitch and roll, as forward, up and right vectors.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The orientation of the environment's listener: yaw, then pitch, then roll, in degrees.
///
/// All angles 0 is the default listener: facing -Z with +Y up and +X to the right. The
/// rotations follow the right-hand rule and are applied in the listener's own frame (intrinsic),
/// in this order:
/// - **yaw** turns about the vertical axis +Y: positive yaw turns the listener to the left
///   (forward (0,0,-1) becomes (-sin yaw, 0, -cos yaw));
/// - **pitch** then turns about the listener's right axis: positive pitch looks up;
/// - **roll** then turns about the listener's forward axis: positive roll tilts the head to the
///   right (up (0,1,0) becomes (sin roll, cos roll, 0) for roll alone).
///
/// The rotation matrix is `Ry(yaw) · Rx(pitch) · Rz(-roll)` (rotations about the world axes,
/// composed so that each later one acts in the already rotated frame).
///
/// Thread safety: a value type; every method is pure and real-time safe.
public struct ListenerOrientation: Hashable, Sendable {
    /// Degrees, positive turns left.
    public var yaw: Double
    /// Degrees, positive looks up.
    public var pitch: Double
    /// Degrees, positive tilts the head to the right.
    public var roll: Double

    public init(yaw: Double = 0, pitch: Double = 0, roll: Double = 0) {
        self.yaw = yaw
        self.pitch = pitch
        self.roll = roll
    }

    /// The rotated frame: the listener's right, up and forward unit vectors in world space.
    public var axes: (right: Vector3, up: Vector3, forward: Vector3) {
        axes(forward: Vector3(0, 0, -1), up: Vector3(0, 1, 0))
    }

    /// The frame of a listener whose unrotated orientation is the Web Audio AudioListener's
    /// `forward` and `up` vectors (any length), then turned by yaw, pitch and roll in its own
    /// frame. As in Web Audio the frame is `right = normalize(forward × up)`,
    /// `forward' = normalize(forward)`, `up' = right × forward'` (so `up` need not be
    /// perpendicular). A zero `forward`, or `up` parallel to it or zero, has no frame: the default
    /// (forward -Z, up +Y) is used. The default vectors give exactly ``axes``.
    public func axes(forward: Vector3, up: Vector3) -> (right: Vector3, up: Vector3, forward: Vector3) {
        let right0 = forward.cross(up).normalized
        let forward0 = forward.normalized
        let degenerate = right0 == .zero || !(right0.x.isFinite && right0.y.isFinite && right0.z.isFinite)
            || !(forward0.x.isFinite && forward0.y.isFinite && forward0.z.isFinite)
        let baseRight = degenerate ? Vector3(1, 0, 0) : right0
        let baseForward = degenerate ? Vector3(0, 0, -1) : forward0
        let baseUp = baseRight.cross(baseForward)
        let baseBack = -baseForward
        let m = rotation
        // The rotation acts in the base frame: world = baseRight·x + baseUp·y + baseBack·z.
        return (Self.world(m.right, baseRight, baseUp, baseBack), Self.world(m.up, baseRight, baseUp, baseBack),
                -Self.world(m.back, baseRight, baseUp, baseBack))
    }

    @inline(__always)
    private static func world(_ c: Vector3, _ right: Vector3, _ up: Vector3, _ back: Vector3) -> Vector3 {
        right * c.x + up * c.y + back * c.z
    }

    /// The rotation's images of +X, +Y and +Z in the unrotated frame (x right, y up, z back).
    private var rotation: (right: Vector3, up: Vector3, back: Vector3) {
        let toRadians = Double.pi / 180
        let (sy, cy) = (sin(yaw * toRadians), cos(yaw * toRadians))
        let (sp, cp) = (sin(pitch * toRadians), cos(pitch * toRadians))
        // Roll about -Z by +roll is a rotation about +Z by -roll.
        let (sr, cr) = (sin(-roll * toRadians), cos(-roll * toRadians))
        // M = Ry(yaw) * Rx(pitch) * Rz(-roll); its columns are the images of +X, +Y, +Z.
        // Ry = [[cy,0,sy],[0,1,0],[-sy,0,cy]], Rx = [[1,0,0],[0,cp,-sp],[0,sp,cp]],
        // Rz = [[cr,-sr,0],[sr,cr,0],[0,0,1]].
        // A = Ry * Rx:
        let a00 = cy, a01 = sy * sp, a02 = sy * cp
        let a10 = 0.0, a11 = cp, a12 = -sp
        let a20 = -sy, a21 = cy * sp, a22 = cy * cp
        // M = A * Rz: column 0 = A*(cr, sr, 0), column 1 = A*(-sr, cr, 0), column 2 = A*(0,0,1).
        let right = Vector3(a00 * cr + a01 * sr, a10 * cr + a11 * sr, a20 * cr + a21 * sr)
        let up = Vector3(-a00 * sr + a01 * cr, -a10 * sr + a11 * cr, -a20 * sr + a21 * cr)
        let back = Vector3(a02, a12, a22)
        return (right, up, back)
    }

    /// Where the listener faces (world space, unit length).
    public var forward: Vector3 { axes.forward }
    /// The top of the listener's head (world space, unit length).
    public var up: Vector3 { axes.up }
    /// The listener's right ear side (world space, unit length).
    public var right: Vector3 { axes.right }

    /// A world-space offset (source minus listener position) expressed in the listener's own
    /// frame: x to the listener's right, y to the top of the head, z behind (so -z is ahead).
    /// For the default listener this is the offset itself.
    @inlinable
    public func listenerRelative(_ offset: Vector3) -> Vector3 {
        let a = axes
        return Vector3(offset.dot(a.right), offset.dot(a.up), -offset.dot(a.forward))
    }
}
