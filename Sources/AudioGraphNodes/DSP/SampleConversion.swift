// Sample-type conversion (float <-> int16/int24/int32/float64) and interleaving of channel buffers.

/// Converts between the canonical non-interleaved `Float` channel buffers and the edge formats:
/// `int16`, `int24` (packed 3 bytes), `int32`, `float32` and `float64` samples, little-endian,
/// interleaved or not.
///
/// Integer scaling uses 2^(bits-1) both ways: `int = round(x * 2^(bits-1))` clamped to
/// `[-2^(bits-1), 2^(bits-1) - 1]` (so +1.0 clips to the largest integer), and
/// `x = int / 2^(bits-1)`, which round-trips every integer exactly. NaN converts to 0. No
/// dither is applied.
///
/// Every function takes a `stride` in samples, so one channel can be written into (or read from)
/// an interleaved buffer at `base + channel * bytesPerSample` with `stride = channelCount`.
///
/// Thread safety: stateless; every function is real-time safe (no allocation, no locks).
package enum SampleConversion {

    /// 1.5 * 2^52: adding and subtracting it rounds a Double of magnitude below 2^51 to the
    /// nearest integer, ties to even (the FPU's default mode), without a call to `rint`.
    @usableFromInline static let roundingMagic = 6_755_399_441_055_744.0

    /// `x * scale` rounded to the nearest integer (ties to even) and clipped to `lo...hi` (integers
    /// of magnitude at most 2^31); NaN gives 0. Clipping first is the same as rounding first, since
    /// the bounds are integers.
    @inline(__always)
    static func quantize(_ x: Float, scale: Double, min lo: Double, max hi: Double) -> Double {
        let v = Double(x) * scale
        if !(v == v) { return 0 }   // NaN
        return (Swift.min(Swift.max(v, lo), hi) + roundingMagic) - roundingMagic
    }

    /// Writes `count` floats from `source` as `type` samples at `destination`, `stride` samples
    /// apart (1: contiguous). Real-time safe.
    package static func write(_ source: UnsafePointer<Float>, count: Int, to destination: UnsafeMutableRawPointer,
                             as type: SampleType, stride: Int = 1) {
        let step = type.bytesPerSample * stride
        switch type {
        case .float32:
            for i in 0..<count {
                destination.storeBytes(of: source[i].bitPattern.littleEndian, toByteOffset: i * step, as: UInt32.self)
            }
        case .float64:
            for i in 0..<count {
                destination.storeBytes(of: Double(source[i]).bitPattern.littleEndian, toByteOffset: i * step, as: UInt64.self)
            }
        case .int16:
            for i in 0..<count {
                let v = Int16(quantize(source[i], scale: 32768, min: -32768, max: 32767))
                destination.storeBytes(of: v.littleEndian, toByteOffset: i * step, as: Int16.self)
            }
        case .int24:
            for i in 0..<count {
                let v = Int32(quantize(source[i], scale: 8_388_608, min: -8_388_608, max: 8_388_607))
                let u = UInt32(bitPattern: v)
                let p = destination + i * step
                p.storeBytes(of: UInt8(truncatingIfNeeded: u), as: UInt8.self)
                p.storeBytes(of: UInt8(truncatingIfNeeded: u >> 8), toByteOffset: 1, as: UInt8.self)
                p.storeBytes(of: UInt8(truncatingIfNeeded: u >> 16), toByteOffset: 2, as: UInt8.self)
            }
        case .int32:
            for i in 0..<count {
                let v = Int32(quantize(source[i], scale: 2_147_483_648, min: -2_147_483_648, max: 2_147_483_647))
                destination.storeBytes(of: v.littleEndian, toByteOffset: i * step, as: Int32.self)
            }
        }
    }

    /// Reads `count` samples of `type`, `stride` samples apart, from `source` into floats.
    /// Real-time safe.
    package static func read(from source: UnsafeRawPointer, as type: SampleType, stride: Int = 1, count: Int,
                            into destination: UnsafeMutablePointer<Float>) {
        let step = type.bytesPerSample * stride
        switch type {
        case .float32:
            for i in 0..<count {
                destination[i] = Float(bitPattern: UInt32(littleEndian: source.loadUnaligned(fromByteOffset: i * step, as: UInt32.self)))
            }
        case .float64:
            for i in 0..<count {
                destination[i] = Float(Double(bitPattern: UInt64(littleEndian: source.loadUnaligned(fromByteOffset: i * step, as: UInt64.self))))
            }
        case .int16:
            for i in 0..<count {
                let v = Int16(littleEndian: source.loadUnaligned(fromByteOffset: i * step, as: Int16.self))
                destination[i] = Float(v) * (1 / 32768)   // exact: 16 bits fit a Float
            }
        case .int24:
            for i in 0..<count {
                let p = source + i * step
                let u = UInt32(p.load(as: UInt8.self)) | UInt32(p.load(fromByteOffset: 1, as: UInt8.self)) << 8
                    | UInt32(p.load(fromByteOffset: 2, as: UInt8.self)) << 16
                let v = Int32(bitPattern: u << 8) >> 8   // sign-extend 24 bits
                destination[i] = Float(v) * (1 / 8_388_608)   // exact: 24 bits fit a Float
            }
        case .int32:
            for i in 0..<count {
                let v = Int32(littleEndian: source.loadUnaligned(fromByteOffset: i * step, as: Int32.self))
                destination[i] = Float(v) * (1 / 2_147_483_648)   // one rounding, as before
            }
        }
    }

    /// Writes non-interleaved float channels as `type` samples into `destination`: interleaved
    /// (frame after frame) or, when `interleaved` is false, channel after channel (`frameCount`
    /// samples each). Real-time safe.
    package static func write(channels: UnsafeBufferPointer<UnsafePointer<Float>>, frameCount: Int,
                             to destination: UnsafeMutableRawPointer, as type: SampleType, interleaved: Bool) {
        let n = channels.count, bytes = type.bytesPerSample
        for c in 0..<n {
            if interleaved {
                write(channels[c], count: frameCount, to: destination + c * bytes, as: type, stride: n)
            } else {
                write(channels[c], count: frameCount, to: destination + c * frameCount * bytes, as: type)
            }
        }
    }

    /// Reads `type` samples laid out as ``write(channels:frameCount:to:as:interleaved:)`` writes
    /// them into non-interleaved float channels (as many as `channels.count`). Real-time safe.
    package static func read(from source: UnsafeRawPointer, as type: SampleType, interleaved: Bool, frameCount: Int,
                            into channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>) {
        let n = channels.count, bytes = type.bytesPerSample
        for c in 0..<n {
            if interleaved {
                read(from: source + c * bytes, as: type, stride: n, count: frameCount, into: channels[c])
            } else {
                read(from: source + c * frameCount * bytes, as: type, count: frameCount, into: channels[c])
            }
        }
    }

    /// Interleaves float channels into `destination` (`frameCount * channels.count` floats).
    /// Real-time safe.
    @inline(__always)
    package static func interleave(_ channels: UnsafeBufferPointer<UnsafePointer<Float>>, frameCount: Int,
                                  into destination: UnsafeMutablePointer<Float>) {
        let n = channels.count
        for c in 0..<n {
            let src = channels[c]
            for i in 0..<frameCount { destination[i * n + c] = src[i] }
        }
    }

    /// Splits interleaved floats (`frameCount * channels.count`) into channel buffers.
    /// Real-time safe.
    @inline(__always)
    package static func deinterleave(_ source: UnsafePointer<Float>, frameCount: Int,
                                    into channels: UnsafeBufferPointer<UnsafeMutablePointer<Float>>) {
        let n = channels.count
        for c in 0..<n {
            let dst = channels[c]
            for i in 0..<frameCount { dst[i] = source[i * n + c] }
        }
    }

    /// Rounds `count` floats in place to what `type` can carry (the value a float -> `type` ->
    /// float round trip gives): integers are quantized and clipped, float64 and float32 leave the
    /// samples unchanged. What a converter node with an integer output format does inside the
    /// (float) graph. Real-time safe.
    package static func quantize(_ samples: UnsafeMutablePointer<Float>, count: Int, to type: SampleType) {
        let scale: Double
        switch type {
        case .float32, .float64: return
        case .int16: scale = 32768
        case .int24: scale = 8_388_608
        case .int32: scale = 2_147_483_648
        }
        let inverse = 1 / scale
        for i in 0..<count {
            samples[i] = Float(quantize(samples[i], scale: scale, min: -scale, max: scale - 1) * inverse)
        }
    }
}
