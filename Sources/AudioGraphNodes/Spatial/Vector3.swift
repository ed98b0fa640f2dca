// A 3D vector in metres (right-handed: +X right, +Y up, -Z ahead of the default listener).

/// A point or direction in the environment's space, in double precision.
///
/// The space is right-handed with +X to the right, +Y up and the default listener facing -Z
/// (the OpenAL / AVAudioEnvironmentNode convention of the graph format).
///
/// Thread safety: a value type; every method is pure and real-time safe.
public struct Vector3: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable
    public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    public static let zero = Vector3(0, 0, 0)

    @inlinable public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inlinable public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    @inlinable public static func * (a: Vector3, s: Double) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }
    @inlinable public static prefix func - (a: Vector3) -> Vector3 { Vector3(-a.x, -a.y, -a.z) }

    /// The dot product.
    @inlinable public func dot(_ b: Vector3) -> Double { x * b.x + y * b.y + z * b.z }

    /// The cross product `self × b` (right-handed).
    @inlinable public func cross(_ b: Vector3) -> Vector3 {
        Vector3(y * b.z - z * b.y, z * b.x - x * b.z, x * b.y - y * b.x)
    }

    /// The Euclidean length.
    @inlinable public var length: Double { (x * x + y * y + z * z).squareRoot() }

    /// The vector scaled to length 1; the zero vector stays zero.
    @inlinable public var normalized: Vector3 {
        let l = length
        return l > 0 ? self * (1 / l) : self
    }
}
