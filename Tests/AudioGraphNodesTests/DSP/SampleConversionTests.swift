// Tests of SampleConversion: scaling, clipping, rounding, byte layout, interleaving.

import Foundation
import XCTest
@testable import AudioGraphNodes

final class SampleConversionTests: XCTestCase {

    func bytes(_ values: [Float], _ type: SampleType) -> [UInt8] {
        var out = [UInt8](repeating: 0xAA, count: values.count * type.bytesPerSample)
        values.withUnsafeBufferPointer { src in out.withUnsafeMutableBytes { dst in
            SampleConversion.write(src.baseAddress!, count: values.count, to: dst.baseAddress!, as: type)
        } }
        return out
    }

    func floats(_ raw: [UInt8], _ type: SampleType) -> [Float] {
        let n = raw.count / type.bytesPerSample
        var out = [Float](repeating: .nan, count: n)
        raw.withUnsafeBytes { src in out.withUnsafeMutableBufferPointer { dst in
            SampleConversion.read(from: src.baseAddress!, as: type, count: n, into: dst.baseAddress!)
        } }
        return out
    }

    func testInt16ScalingClippingRoundingAndLayout() {
        let x: [Float] = [0, 0.5, -1, 1, 1.5, -2, 0.5 / 32768, 1.5 / 32768, -0.25, .nan]
        let raw = bytes(x, .int16)
        let ints = (0..<x.count).map { Int16(bitPattern: UInt16(raw[2 * $0]) | UInt16(raw[2 * $0 + 1]) << 8) }
        XCTAssertEqual(ints, [0, 16384, -32768, 32767, 32767, -32768, 0, 2, -8192, 0])
        XCTAssertEqual(Array(raw[2...3]), [0x00, 0x40])   // little-endian 0x4000
        XCTAssertEqual(floats(raw, .int16), [0, 0.5, -1, Float(32767) / 32768, Float(32767) / 32768, -1, 0,
                                             2.0 / 32768, -0.25, 0])
    }

    func testInt24PackedLittleEndian() {
        let raw = bytes([0.5, -1, -1 / 8_388_608, 1, Float(0x123456) / 8_388_608], .int24)
        XCTAssertEqual(raw.count, 15)
        XCTAssertEqual(Array(raw[0..<3]), [0x00, 0x00, 0x40])
        XCTAssertEqual(Array(raw[3..<6]), [0x00, 0x00, 0x80])
        XCTAssertEqual(Array(raw[6..<9]), [0xFF, 0xFF, 0xFF])
        XCTAssertEqual(Array(raw[9..<12]), [0xFF, 0xFF, 0x7F])
        XCTAssertEqual(Array(raw[12..<15]), [0x56, 0x34, 0x12])
        XCTAssertEqual(floats(raw, .int24), [0.5, -1, -1 / 8_388_608, Float(8_388_607.0 / 8_388_608), Float(0x123456) / 8_388_608])
    }

    func testInt32AndFloats() {
        let raw = bytes([0.25, -1, 1], .int32)
        let ints = (0..<3).map { i in Int32(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(raw[4 * i + $1]) << (8 * $1) }) }
        XCTAssertEqual(ints, [536_870_912, Int32.min, Int32.max])
        let x: [Float] = [0.1, -0.7, 3.5, 1e-20]
        XCTAssertEqual(floats(bytes(x, .float32), .float32), x)
        XCTAssertEqual(floats(bytes(x, .float64), .float64), x)
        let f64 = bytes([0.1], .float64)
        let d = Double(bitPattern: (0..<8).reduce(UInt64(0)) { $0 | UInt64(f64[$1]) << (8 * $1) })
        XCTAssertEqual(d, Double(Float(0.1)))
    }

    func testRoundTripErrorIsHalfAStep() {
        var seed: UInt64 = 7
        let x: [Float] = (0..<5000).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Double(seed >> 11) / Double(1 << 53) * 1.98 - 0.99)
        }
        for (type, bits) in [(SampleType.int16, 16), (.int24, 24), (.int32, 32)] {
            let back = floats(bytes(x, type), type)
            let step = 1 / pow(2.0, Double(bits - 1))
            // int32's step is below Float's resolution: the float error dominates there.
            let tol = max(step / 2, 6e-8)
            for i in 0..<x.count { XCTAssertEqual(Double(back[i]), Double(x[i]), accuracy: tol, "\(type)") }
            // Integers survive int -> float -> int exactly.
            XCTAssertEqual(bytes(back, type), bytes(x, type), "\(type)")
        }
    }

    func testInterleavedAndPlanarLayouts() {
        let ch: [[Float]] = [[0.5, 0.25, 0], [-0.5, -0.25, 1]]
        let ptrs = ch.map { c -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: 3); p.initialize(from: c, count: 3); return p
        }
        defer { ptrs.forEach { $0.deallocate() } }
        let inPtrs = ptrs.map { UnsafePointer($0) }
        for interleaved in [true, false] {
            var raw = [UInt8](repeating: 0, count: 12)
            inPtrs.withUnsafeBufferPointer { ib in raw.withUnsafeMutableBytes { r in
                SampleConversion.write(channels: ib, frameCount: 3, to: r.baseAddress!, as: .int16, interleaved: interleaved)
            } }
            let ints = (0..<6).map { Int16(bitPattern: UInt16(raw[2 * $0]) | UInt16(raw[2 * $0 + 1]) << 8) }
            XCTAssertEqual(ints, interleaved ? [16384, -16384, 8192, -8192, 0, 32767]
                                             : [16384, 8192, 0, -16384, -8192, 32767])
            let outs = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 3) }
            defer { outs.forEach { $0.deallocate() } }
            raw.withUnsafeBytes { r in outs.withUnsafeBufferPointer { ob in
                SampleConversion.read(from: r.baseAddress!, as: .int16, interleaved: interleaved, frameCount: 3, into: ob)
            } }
            XCTAssertEqual(Array(UnsafeBufferPointer(start: outs[0], count: 3)), [0.5, 0.25, 0])
            XCTAssertEqual(Array(UnsafeBufferPointer(start: outs[1], count: 3)), [-0.5, -0.25, Float(32767) / 32768])
        }
        // Float interleave / deinterleave.
        var inter = [Float](repeating: 0, count: 6)
        inPtrs.withUnsafeBufferPointer { ib in inter.withUnsafeMutableBufferPointer {
            SampleConversion.interleave(ib, frameCount: 3, into: $0.baseAddress!)
        } }
        XCTAssertEqual(inter, [0.5, -0.5, 0.25, -0.25, 0, 1])
        let outs = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 3) }
        defer { outs.forEach { $0.deallocate() } }
        inter.withUnsafeBufferPointer { s in outs.withUnsafeBufferPointer {
            SampleConversion.deinterleave(s.baseAddress!, frameCount: 3, into: $0)
        } }
        XCTAssertEqual(Array(UnsafeBufferPointer(start: outs[1], count: 3)), [-0.5, -0.25, 1])
    }
}
