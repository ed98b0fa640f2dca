// Tests of ChannelMixing against the Web Audio up/down-mix and StereoPanner formulas written here.

import Foundation
import XCTest
@testable import AudioGraphNodes

final class ChannelMixingTests: XCTestCase {
    let frames = 37

    /// Deterministic distinct test signal for channel c.
    func signal(_ channels: Int) -> [[Float]] {
        (0..<channels).map { c in
            (0..<frames).map { n in Float(sin(Double(n) * 0.31 + Double(c) * 1.7) * (0.3 + 0.1 * Double(c))) }
        }
    }

    /// Runs ChannelMixing.mix on Swift arrays.
    func runMix(_ x: [[Float]], outChannels: Int, gain: ChannelMixing.Values = .constant(1),
                accumulateOnto initial: [[Float]]? = nil) -> [[Float]] {
        let inPtrs = x.map { ch -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: frames)
            p.initialize(from: ch, count: frames)
            return p
        }
        let outPtrs = (0..<outChannels).map { c -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: frames)
            if let initial { p.initialize(from: initial[c], count: frames) }
            else { p.initialize(repeating: 12345, count: frames) }  // garbage must be overwritten
            return p
        }
        defer { inPtrs.forEach { $0.deallocate() }; outPtrs.forEach { $0.deallocate() } }
        let ins = inPtrs.map { UnsafePointer($0) }
        ins.withUnsafeBufferPointer { ib in
            outPtrs.withUnsafeBufferPointer { ob in
                ChannelMixing.mix(input: ib, output: ob, frameCount: frames, gain: gain,
                                  accumulate: initial != nil)
            }
        }
        return outPtrs.map { Array(UnsafeBufferPointer(start: $0, count: frames)) }
    }

    /// The Web Audio "speakers"/"discrete" rules, written out in Double for one frame.
    func reference(_ v: [Double], _ oc: Int) -> [Double] {
        let ic = v.count
        let s = 1.0 / 2.0.squareRoot()
        var y = [Double](repeating: 0, count: oc)
        if ic == oc { return v }
        let speakers: Set<Int> = [1, 2, 4, 6]
        guard speakers.contains(ic) && speakers.contains(oc) else {
            for c in 0..<min(ic, oc) { y[c] = v[c] }
            return y
        }
        switch (ic, oc) {
        case (1, 2), (1, 4): y[0] = v[0]; y[1] = v[0]
        case (1, 6): y[2] = v[0]
        case (2, 1): y[0] = 0.5 * (v[0] + v[1])
        case (2, 4), (2, 6): y[0] = v[0]; y[1] = v[1]
        case (4, 1): y[0] = 0.25 * (v[0] + v[1] + v[2] + v[3])
        case (4, 2): y[0] = 0.5 * (v[0] + v[2]); y[1] = 0.5 * (v[1] + v[3])
        case (4, 6): y[0] = v[0]; y[1] = v[1]; y[4] = v[2]; y[5] = v[3]
        case (6, 1): y[0] = s * (v[0] + v[1]) + v[2] + 0.5 * (v[4] + v[5])
        case (6, 2): y[0] = v[0] + s * (v[2] + v[4]); y[1] = v[1] + s * (v[2] + v[5])
        case (6, 4): y[0] = v[0] + s * v[2]; y[1] = v[1] + s * v[2]; y[2] = v[4]; y[3] = v[5]
        default: XCTFail("unexpected pair \(ic)->\(oc)")
        }
        return y
    }

    func check(_ ic: Int, _ oc: Int, file: StaticString = #filePath, line: UInt = #line) {
        let x = signal(ic)
        let y = runMix(x, outChannels: oc)
        XCTAssertEqual(y.count, oc)
        for n in 0..<frames {
            let exp = reference((0..<ic).map { Double(x[$0][n]) }, oc)
            for c in 0..<oc {
                XCTAssertEqual(Double(y[c][n]), exp[c], accuracy: 1e-6,
                               "\(ic)->\(oc) channel \(c) frame \(n)", file: file, line: line)
            }
        }
    }

    func testEverySpeakersPair() {
        for ic in [1, 2, 4, 6] { for oc in [1, 2, 4, 6] { check(ic, oc) } }
    }

    func testSpotValuesSixToStereo() {
        // L=1, R=0, C=1, LFE=5 (dropped), SL=1, SR=0 -> outL = 1 + s*2, outR = s*1
        let x: [[Float]] = [[1], [0], [1], [5], [1], [0]]
        let inPtrs = x.map { _ in UnsafePointer(UnsafeMutablePointer<Float>.allocate(capacity: 1)) }
        for (c, p) in inPtrs.enumerated() { UnsafeMutablePointer(mutating: p).pointee = x[c][0] }
        let outs = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 1) }
        inPtrs.withUnsafeBufferPointer { ib in outs.withUnsafeBufferPointer { ob in
            ChannelMixing.mix(input: ib, output: ob, frameCount: 1)
        } }
        XCTAssertEqual(Double(outs[0][0]), 1 + 2 * 0.5.squareRoot(), accuracy: 1e-6)
        XCTAssertEqual(Double(outs[1][0]), 0.5.squareRoot(), accuracy: 1e-6)
        inPtrs.forEach { $0.deallocate() }; outs.forEach { $0.deallocate() }
    }

    func testDiscretePairs() {
        for (ic, oc) in [(3, 5), (5, 3), (8, 2), (2, 3), (1, 3), (6, 8), (8, 6), (3, 1)] { check(ic, oc) }
    }

    func testGainAndAccumulate() {
        let x = signal(2)
        let initial = signal(1).map { $0.map { $0 * 0.5 } }
        let g: [Float] = (0..<frames).map { Float($0) / Float(frames) }
        let y = g.withUnsafeBufferPointer { gp in
            runMix(x, outChannels: 1, gain: .perSample(gp.baseAddress!), accumulateOnto: initial)
        }
        for n in 0..<frames {
            let exp = Double(initial[0][n]) + Double(g[n]) * 0.5 * (Double(x[0][n]) + Double(x[1][n]))
            XCTAssertEqual(Double(y[0][n]), exp, accuracy: 1e-6)
        }
        let y2 = runMix(x, outChannels: 2, gain: .constant(0.25))
        for n in 0..<frames { XCTAssertEqual(y2[1][n], 0.25 * x[1][n], accuracy: 1e-7) }
    }

    func testPanMonoEqualPower() {
        XCTAssertEqual(Double(ChannelMixing.monoPanGains(pan: 0).left), 0.70710678, accuracy: 1e-7)
        let x = signal(1)[0]
        let l = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let r = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        defer { l.deallocate(); r.deallocate() }
        for pan in [-1.0, -0.6, -0.2, 0.0, 0.35, 0.8, 1.0] {
            x.withUnsafeBufferPointer {
                ChannelMixing.panMono(input: $0.baseAddress!, left: l, right: r, frameCount: frames,
                                      pan: .constant(Float(pan)), gain: .constant(0.5))
            }
            let xx = (pan + 1) / 2
            let gl = cos(xx * .pi / 2), gr = sin(xx * .pi / 2)
            for n in 0..<frames {
                XCTAssertEqual(Double(l[n]), 0.5 * Double(x[n]) * gl, accuracy: 1e-6, "pan \(pan)")
                XCTAssertEqual(Double(r[n]), 0.5 * Double(x[n]) * gr, accuracy: 1e-6, "pan \(pan)")
            }
        }
        // Per-sample pan sweep.
        let pans: [Float] = (0..<frames).map { -1 + 2 * Float($0) / Float(frames - 1) }
        pans.withUnsafeBufferPointer { pp in x.withUnsafeBufferPointer {
            ChannelMixing.panMono(input: $0.baseAddress!, left: l, right: r, frameCount: frames,
                                  pan: .perSample(pp.baseAddress!))
        } }
        for n in 0..<frames {
            let xx = (Double(pans[n]) + 1) / 2
            XCTAssertEqual(Double(l[n]), Double(x[n]) * cos(xx * .pi / 2), accuracy: 1e-6)
            XCTAssertEqual(Double(r[n]), Double(x[n]) * sin(xx * .pi / 2), accuracy: 1e-6)
        }
    }

    func testPanStereo() {
        let x = signal(2)
        let l = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let r = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        defer { l.deallocate(); r.deallocate() }
        func ref(_ L: Double, _ R: Double, _ pan: Double) -> (Double, Double) {
            if pan <= 0 {
                let xx = pan + 1
                return (L + R * cos(xx * .pi / 2), R * sin(xx * .pi / 2))
            }
            return (L * cos(pan * .pi / 2), R + L * sin(pan * .pi / 2))
        }
        for pan in [-1.0, -0.5, 0.0, 0.3, 1.0] {
            x[0].withUnsafeBufferPointer { a in x[1].withUnsafeBufferPointer { b in
                l.initialize(repeating: 0.125, count: frames); r.initialize(repeating: -0.25, count: frames)
                ChannelMixing.panStereo(left: a.baseAddress!, right: b.baseAddress!, outLeft: l, outRight: r,
                                        frameCount: frames, pan: .constant(Float(pan)), gain: .constant(2),
                                        accumulate: true)
            } }
            for n in 0..<frames {
                let (el, er) = ref(Double(x[0][n]), Double(x[1][n]), pan)
                XCTAssertEqual(Double(l[n]), 0.125 + 2 * el, accuracy: 2e-6, "pan \(pan)")
                XCTAssertEqual(Double(r[n]), -0.25 + 2 * er, accuracy: 2e-6, "pan \(pan)")
            }
        }
        // Pan 0 passes stereo unchanged.
        x[0].withUnsafeBufferPointer { a in x[1].withUnsafeBufferPointer { b in
            ChannelMixing.panStereo(left: a.baseAddress!, right: b.baseAddress!, outLeft: l, outRight: r,
                                    frameCount: frames)
        } }
        for n in 0..<frames {
            XCTAssertEqual(l[n], x[0][n], accuracy: 1e-7)
            XCTAssertEqual(r[n], x[1][n], accuracy: 1e-7)
        }
        // Per-sample pan.
        let pans: [Float] = (0..<frames).map { -1 + 2 * Float($0) / Float(frames - 1) }
        pans.withUnsafeBufferPointer { pp in x[0].withUnsafeBufferPointer { a in x[1].withUnsafeBufferPointer { b in
            ChannelMixing.panStereo(left: a.baseAddress!, right: b.baseAddress!, outLeft: l, outRight: r,
                                    frameCount: frames, pan: .perSample(pp.baseAddress!))
        } } }
        for n in 0..<frames {
            let (el, er) = ref(Double(x[0][n]), Double(x[1][n]), Double(pans[n]))
            XCTAssertEqual(Double(l[n]), el, accuracy: 2e-6)
            XCTAssertEqual(Double(r[n]), er, accuracy: 2e-6)
        }
    }
}
