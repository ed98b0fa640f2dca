// Tests of the binaural convolver: measured responses, interaural delay and level, motion, determinism.

import CMySofa
import Foundation
import XCTest
@testable import AudioGraphNodes

final class HRTFConvolverTests: XCTestCase {
    static let sharedSet: HRTFSet = try! HRTFSet.shared(sampleRate: 48000)
    var set: HRTFSet { Self.sharedSet }

    /// libmysofa's own filter for a direction in our frame, read directly.
    private func mysofaFilter(_ d: Vector3) throws -> (left: [Float], right: [Float]) {
        var length: Int32 = 0, err: Int32 = 0
        let easy = try XCTUnwrap(mysofa_open(HRTFSet.defaultPath, 48000, &length, &err))
        defer { mysofa_close(easy) }
        var l = [Float](repeating: 0, count: Int(length)), r = l
        var dl: Float = 0, dr: Float = 0
        let s = HRTFSet.sofaCoordinates(d)
        mysofa_getfilter_float_nointerp(easy, Float(s.x), Float(s.y), Float(s.z), &l, &r, &dl, &dr)
        XCTAssertEqual(dl, 0); XCTAssertEqual(dr, 0) // MIT KEMAR keeps its delays inside the responses
        return (l, r)
    }

    /// Renders `input` in slices of the given sizes (cycled) with a per-frame direction.
    private func render(_ input: [Float], slices: [Int], direction: (Int) -> Vector3) -> (l: [Float], r: [Float]) {
        let conv = HRTFConvolver(set: set)
        var l = [Float](repeating: 0, count: input.count), r = l
        let dirs = (0..<input.count).map(direction)
        var pos = 0, k = 0
        while pos < input.count {
            let n = min(slices[k % slices.count], input.count - pos)
            input.withUnsafeBufferPointer { inp in
                dirs.withUnsafeBufferPointer { d in
                    l.withUnsafeMutableBufferPointer { lp in
                        r.withUnsafeMutableBufferPointer { rp in
                            conv.process(input: inp.baseAddress! + pos, directions: d.baseAddress! + pos,
                                         left: lp.baseAddress! + pos, right: rp.baseAddress! + pos,
                                         frameCount: n, accumulate: false)
                        }
                    }
                }
            }
            pos += n
            k += 1
        }
        return (l, r)
    }

    private func onset(_ x: ArraySlice<Float>, fraction: Float = 0.1) -> Int {
        let peak = x.map(abs).max()!
        return x.firstIndex { abs($0) >= fraction * peak }! - x.startIndex
    }

    private func energy(_ x: ArraySlice<Float>) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } }

    func testImpulseAtRightEqualsTheMeasuredResponseWithInterauralDelayAndLevel() throws {
        let latency = 128
        var impulse = [Float](repeating: 0, count: 2048)
        impulse[0] = 1
        let out = render(impulse, slices: [64]) { _ in Vector3(1, 0, 0) }  // +90 degrees, to the right
        let ref = try mysofaFilter(Vector3(1, 0, 0))
        // Nothing before the latency, then the measured response, then silence.
        XCTAssertTrue(out.l[0..<latency].allSatisfy { $0 == 0 })
        var maxError: Float = 0
        for i in 0..<ref.left.count {
            maxError = max(maxError, abs(out.l[latency + i] - ref.left[i]), abs(out.r[latency + i] - ref.right[i]))
        }
        XCTAssertLessThan(maxError, 2e-6, "rendered impulse vs libmysofa's filter")
        let tail = out.l[(latency + ref.left.count)...].map(abs).max()! + out.r[(latency + ref.left.count)...].map(abs).max()!
        XCTAssertLessThan(tail, 1e-6)

        let l = out.l[latency...], r = out.r[latency...]
        let itd = Double(onset(l) - onset(r)) / 48000 * 1000
        let ild = 10 * log10(energy(r) / energy(l))
        print("HRTF +90 deg: right ear leads by \(itd) ms, right louder by \(ild) dB; max error \(maxError)")
        XCTAssertGreaterThanOrEqual(itd, 0.5)
        XCTAssertLessThanOrEqual(itd, 0.8)
        XCTAssertGreaterThan(ild, 6)

        // Mirror image: a source on the left reaches the left ear first and louder.
        let mirror = render(impulse, slices: [100]) { _ in Vector3(-2, 0, 0) }
        let ml = mirror.l[latency...], mr = mirror.r[latency...]
        let mitd = Double(onset(mr) - onset(ml)) / 48000 * 1000
        XCTAssertGreaterThanOrEqual(mitd, 0.5)
        XCTAssertLessThanOrEqual(mitd, 0.8)
        XCTAssertGreaterThan(10 * log10(energy(ml) / energy(mr)), 6)
    }

    func testLongSignalEqualsDirectConvolution() throws {
        // A noise burst convolved block by block equals the direct-form convolution with the
        // stored response (so partitioning and overlap-save are right across many blocks).
        var seed: UInt64 = 12345
        let input: [Float] = (0..<3000).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: seed >> 11) % 2000 - 1000) / 1000
        }
        let d = Vector3(0.4, 0.3, -1)
        let out = render(input, slices: [333]) { _ in d }
        let m = set.nearestMeasurement(to: d)
        for ear in 0..<2 {
            let h = set.impulseResponse(measurement: m, ear: ear)
            let y = ear == 0 ? out.l : out.r
            var maxError = 0.0
            for n in stride(from: 128, to: input.count, by: 7) {
                var acc = 0.0
                for k in 0..<h.count where n - 128 - k >= 0 { acc += Double(h[k]) * Double(input[n - 128 - k]) }
                maxError = max(maxError, abs(acc - Double(y[n])))
            }
            XCTAssertLessThan(maxError, 2e-5, "ear \(ear)")
        }
    }

    func testSameOutputForAnySliceSize() {
        let frames = 9000
        let input: [Float] = (0..<frames).map { Float(sin(Double($0) * 0.05)) * 0.5 }
        // The source circles the listener once.
        let dir: (Int) -> Vector3 = { n in
            let a = 2 * Double.pi * Double(n) / Double(frames)
            return Vector3(sin(a), 0.2, -cos(a))
        }
        let reference = render(input, slices: [4096], direction: dir)
        for slices in [[1], [64], [512], [7, 300, 1, 129], [4096, 3]] {
            let out = render(input, slices: slices, direction: dir)
            XCTAssertEqual(out.l, reference.l, "slices \(slices)")
            XCTAssertEqual(out.r, reference.r, "slices \(slices)")
        }
        XCTAssertGreaterThan(reference.l.map(abs).max()!, 0.05)
    }

    private func maxStep(_ x: ArraySlice<Float>) -> Float {
        var m: Float = 0
        for i in x.indices.dropFirst() { m = max(m, abs(x[i] - x[i - 1])) }
        return m
    }

    func testMotionIsClickFree() {
        // A 1 kHz tone jumps from hard left to hard right at frame 6000 (the worst case).
        let frames = 12000, jump = 6000
        let input: [Float] = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        let leftDir = Vector3(-1, 0, 0), rightDir = Vector3(1, 0, 0)
        let moving = render(input, slices: [256]) { $0 < jump ? leftDir : rightDir }
        let staticLeft = render(input, slices: [256]) { _ in leftDir }
        let staticRight = render(input, slices: [256]) { _ in rightDir }
        let settled = 2000..<frames
        for (name, m, a, b) in [("left", moving.l, staticLeft.l, staticRight.l), ("right", moving.r, staticLeft.r, staticRight.r)] {
            let own = max(maxStep(a[settled]), maxStep(b[settled]))
            let got = maxStep(m[settled])
            // A hard switch between the two static renders at the block boundary would jump:
            let boundary = (jump / 128 + 1) * 128 + 128
            let hard = Array(a[..<boundary]) + Array(b[boundary...])
            let hardStep = maxStep(hard[settled])
            print("motion \(name) ear: largest step \(got), the tone's own \(own), a hard switch \(hardStep)")
            XCTAssertLessThanOrEqual(got, own * 1.25, "\(name) ear clicks")
            XCTAssertGreaterThan(hardStep, own * 1.5, "the test must be able to see a click (\(name))")
        }
    }
}
