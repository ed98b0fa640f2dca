// Tests of ConvolverNode against direct convolution (scipy fftconvolve, Web Audio's channel rules and normalization).
import AudioGraphCore
import Foundation
import AudioGraphTesting
import XCTest
@testable import AudioGraphNodes

final class ConvolverNodeTests: XCTestCase {
    let sr = 48000.0

    /// Seeded noise in [-1, 1).
    static func noise(_ seed: UInt64, _ n: Int) -> Float {
        var h = UInt64(n) &* 6364136223846793005 &+ seed &* 1442695040888963407
        h ^= h >> 29
        h = h &* 0xbf58476d1ce4e5b9
        h ^= h >> 32
        return Float(Double(h % 20000) / 10000 - 1)
    }

    /// A decaying noise response of `frames` frames per channel (channel c seeded by c).
    static func response(channels: Int, frames: Int, rate: Double = 48000) -> [[Float]] {
        (0..<channels).map { c in (0..<frames).map { i in noise(UInt64(100 + c), i) * Float(exp(-3 * Double(i) / Double(frames))) } }
    }

    func writeResponse(_ h: [[Float]], rate: Int = 48000) throws -> String {
        let url = try TestFiles.makeTemporaryDirectory(self).appendingPathComponent("ir.wav")
        try WAVFile(sampleRate: rate, channels: h).write(to: url)
        return url.path
    }

    /// The reference output planes for input planes `x` (mono or stereo) and response `h`.
    func reference(_ x: [[Float]], _ h: [[Float]], normalize: Bool) throws -> [[Float]] {
        let dir = try TestFiles.makeTemporaryDirectory(self)
        let xin = dir.appendingPathComponent("x.f32"), hin = dir.appendingPathComponent("h.f32"), out = dir.appendingPathComponent("y.f32")
        try x.flatMap { $0 }.withUnsafeBytes { Data($0) }.write(to: xin)
        try h.flatMap { $0 }.withUnsafeBytes { Data($0) }.write(to: hin)
        try ReferenceScript.run("convolution_reference.py", arguments: [
            "\(sr)", normalize ? "1" : "0", xin.path, "\(x.count)", "\(x[0].count)", hin.path, "\(h.count)", "\(h[0].count)", out.path])
        let flat = try Data(contentsOf: out).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let n = x[0].count
        return (0..<(flat.count / n)).map { Array(flat[($0 * n)..<(($0 + 1) * n)]) }
    }

    func render(_ node: ConvolverNode, inputChannels: Int, frames: Int, slices: [Int]? = nil) throws -> [[Float]] {
        let src = formulaSource("src", channels: inputChannels) { c, n in Self.noise(UInt64(7 + c), Int(n)) * 0.5 }
        let g = try startedGraph([src, node], "src -> conv -> out", slice: 512)
        return renderFrames(g, frames: frames, channels: node.outputFormats[0].channelCount, slices: slices)
    }

    /// Every channel configuration of Web Audio's diagram, with responses long enough to use
    /// every FFT level (20 000 frames), normalized and not: the worst error relative to the
    /// output's peak is at float rounding level.
    func testMatchesDirectConvolutionForEveryChannelConfiguration() throws {
        let frames = 40000
        for (inputs, irChannels, normalize) in [(1, 1, false), (1, 2, true), (2, 1, false), (2, 2, true), (1, 4, false), (2, 4, true)] {
            let h = Self.response(channels: irChannels, frames: 20000)
            let node = try ConvolverNode(id: "conv", sampleRate: sr, properties: ConvolverProperties(file: try writeResponse(h), normalize: normalize))
            let y = try render(node, inputChannels: inputs, frames: frames)
            let x = (0..<inputs).map { c in (0..<frames).map { Self.noise(UInt64(7 + c), $0) * 0.5 } }
            let ref = try reference(x, h, normalize: normalize)
            XCTAssertEqual(y.count, ref.count, "output channels for \(inputs) in, \(irChannels)-channel response")
            let peak = ref.flatMap { $0 }.map(abs).max()!
            var worst: Float = 0
            for c in 0..<ref.count { for i in 0..<frames { worst = max(worst, abs(y[c][i] - ref[c][i])) } }
            print("convolver \(inputs) in, \(irChannels)-ch response, normalize \(normalize): worst error \(worst / peak) of the peak \(peak)")
            XCTAssertLessThan(worst / peak, 2e-6, "\(inputs) in, \(irChannels)-channel response")
            // Zero latency: the first frame is already x[0]·h[0].
            XCTAssertEqual(y[0][0], ref[0][0], accuracy: 1e-6 * peak)
        }
    }

    /// A 3 s stereo response at 48 kHz on a stereo input: exact against direct convolution.
    func testThreeSecondStereoResponse() throws {
        let frames = 48000 * 4
        let h = Self.response(channels: 2, frames: 48000 * 3)
        let node = try ConvolverNode(id: "conv", sampleRate: sr, properties: ConvolverProperties(file: try writeResponse(h), normalize: false))
        let start = Date()
        let y = try render(node, inputChannels: 2, frames: frames)
        let seconds = Date().timeIntervalSince(start)
        let x = (0..<2).map { c in (0..<frames).map { Self.noise(UInt64(7 + c), $0) * 0.5 } }
        let ref = try reference(x, h, normalize: false)
        let peak = ref.flatMap { $0 }.map(abs).max()!
        var worst: Float = 0
        for c in 0..<2 { for i in 0..<frames { worst = max(worst, abs(y[c][i] - ref[c][i])) } }
        print("convolver 3 s stereo response: worst error \(worst / peak) of the peak; 4 s rendered in \(seconds) s (debug build)")
        XCTAssertLessThan(worst / peak, 2e-6)
    }

    /// The output is bit-identical for any slice sizes.
    func testOutputIsBitIdenticalForAnySliceSizes() throws {
        let path = try writeResponse(Self.response(channels: 2, frames: 20000))
        func run(_ slices: [Int]) throws -> [[Float]] {
            try render(try ConvolverNode(id: "conv", sampleRate: sr, properties: ConvolverProperties(file: path)),
                       inputChannels: 2, frames: 40000, slices: slices)
        }
        let whole = try run([512])
        XCTAssertEqual(try run([1, 17, 64, 333, 512, 7, 129]), whole)
    }

    /// Offline rendering on two threads (the second output's engine on the kernel's helper
    /// thread) is bit-identical to the serial render, for every channel configuration with two
    /// outputs, for mixed slice sizes, and when the thread count changes between render calls
    /// (the helper started and stopped while the graph is stopped); the helper took part (the
    /// render thread computes the slices the helper has not claimed: the same engines).
    /// Outputs sharing an input use one engine in a serial render and keep it when the count
    /// rises after the first slice (then serially, the same bits). The helper is made to run every
    /// job (``RenderHelperThread/testOnly_helperRunsEveryJob``) so that its part is certain under
    /// any load; one run in the normal mode, where the render thread takes back the jobs the
    /// helper has not claimed, gives the same bits too.
    func testTwoThreadRenderIsBitIdenticalToTheSerialRender() throws {
        RenderHelperThread.testOnly_helperRunsEveryJob.store(true, ordering: .relaxed)
        defer { RenderHelperThread.testOnly_helperRunsEveryJob.store(false, ordering: .relaxed) }
        let frames = 40000
        for (inputs, irChannels) in [(1, 2), (2, 1), (2, 2), (1, 4), (2, 4)] {
            let path = try writeResponse(Self.response(channels: irChannels, frames: 20000))
            let sharedInput = inputs == 1 || irChannels == 4
            func run(threads: [Int], slices: [Int]) throws -> (y: [[Float]], helperJobs: Int, engines: Int) {
                let node = try ConvolverNode(id: "conv", sampleRate: sr, properties: ConvolverProperties(file: path))
                let src = formulaSource("src", channels: inputs) { c, n in Self.noise(UInt64(7 + c), Int(n)) * 0.5 }
                let g = try startedGraph([src, node], "src -> conv -> out", slice: 512) { try $0.setRenderThreadCount(threads[0]) }
                var y = [[Float]](repeating: [], count: 2), jobs = 0
                for (k, t) in threads.enumerated() {
                    if k > 0 {
                        jobs += (node.kernel as! ConvolverKernel).helperJobsRun
                        g.stop()
                        try g.setRenderThreadCount(t)
                        try g.start()
                    }
                    let part = renderFrames(g, frames: frames / threads.count, channels: 2, slices: slices)
                    for c in 0..<2 { y[c] += part[c] }
                }
                let kernel = node.kernel as! ConvolverKernel
                jobs += kernel.helperJobsRun
                let engines = kernel.engineCount
                g.stop()
                g.uninitialize()
                return (y, jobs, engines)
            }
            let what = "\(inputs) in, \(irChannels)-channel response"
            let serial = try run(threads: [1], slices: [512])
            XCTAssertEqual(serial.helperJobs, 0)
            XCTAssertEqual(serial.engines, sharedInput ? 1 : 2, what)
            let parallel = try run(threads: [2], slices: [512])
            XCTAssertEqual(parallel.engines, 2, what)
            XCTAssertGreaterThan(parallel.helperJobs, 0, "\(what): the helper computed slices")
            XCTAssertTrue(parallel.y == serial.y, "\(what): two threads differ from one")
            let mixed = try run(threads: [2, 1, 2, 2], slices: [1, 17, 64, 333, 512, 7, 129])
            XCTAssertGreaterThan(mixed.helperJobs, 0)
            XCTAssertTrue(mixed.y == serial.y, "\(what): thread count changed between calls")
            let late = try run(threads: [1, 2], slices: [512])
            XCTAssertEqual(late.engines, sharedInput ? 1 : 2, what)
            if sharedInput { XCTAssertEqual(late.helperJobs, 0, what) } else { XCTAssertGreaterThan(late.helperJobs, 0, what) }
            XCTAssertTrue(late.y == serial.y, "\(what): two threads from the second call on")
            RenderHelperThread.testOnly_helperRunsEveryJob.store(false, ordering: .relaxed)
            let normal = try run(threads: [2], slices: [1, 17, 64, 333, 512, 7, 129])
            XCTAssertTrue(normal.y == serial.y, "\(what): jobs taken back by the render thread")
            RenderHelperThread.testOnly_helperRunsEveryJob.store(true, ordering: .relaxed)
        }
    }

    /// A response at 24 kHz is converted (libsoxr) to the node's 48 kHz: the output matches the
    /// same smooth response sampled at 48 kHz to within the converter's error.
    func testResponseAtAnotherRateIsConverted() throws {
        func smooth(_ rate: Double) -> [[Float]] {
            [(0..<Int(0.25 * rate)).map { i in let t = Double(i) / rate; return Float(exp(-t / 0.05) * sin(2 * Double.pi * 700 * t)) }]
        }
        let native = try ConvolverNode(id: "conv", sampleRate: sr, properties: ConvolverProperties(file: try writeResponse(smooth(48000)), normalize: false))
        let converted = try ConvolverNode(id: "conv", sampleRate: sr,
                                          properties: ConvolverProperties(file: try writeResponse(smooth(24000), rate: 24000), normalize: false))
        let a = try render(native, inputChannels: 1, frames: 24000)[0]
        let b = try render(converted, inputChannels: 1, frames: 24000)[0]
        let peak = a.map(abs).max()!
        let worst = zip(a, b).map { abs($0 - $1) }.max()!
        print("convolver 24 kHz response converted: worst difference \(worst / peak) of the peak")
        XCTAssertLessThan(worst / peak, 2e-3)
        XCTAssertGreaterThan(peak, 1)
    }

    /// Responses of 3 channels, empty files and missing files are refused, naming the file.
    func testUnsuitableResponsesAreRefused() throws {
        let three = try writeResponse(Self.response(channels: 3, frames: 100))
        XCTAssertThrowsError(try ConvolverNode(id: "c", sampleRate: sr, properties: ConvolverProperties(file: three))) {
            XCTAssertTrue("\($0)".contains("1, 2 or 4 channels") && "\($0)".contains(three), "\($0)")
        }
        XCTAssertThrowsError(try ConvolverNode(id: "c", sampleRate: sr, properties: ConvolverProperties(file: "/nonexistent/ir.wav"))) {
            XCTAssertTrue("\($0)".contains("/nonexistent/ir.wav"), "\($0)")
        }
    }

    func testNormalizationScaleIsWebAudios() {
        // One channel of constant 0.5: power 0.5, scale 0.00125 / 0.5 · 44100 / 48000.
        XCTAssertEqual(ConvolverNode.normalizationScale([[Float](repeating: 0.5, count: 10)], sampleRate: 48000),
                       0.0025 * 44100 / 48000, accuracy: 1e-12)
        // Silence: MinPower; four channels: halved.
        XCTAssertEqual(ConvolverNode.normalizationScale([[Float]](repeating: [0, 0], count: 4), sampleRate: 44100), 5, accuracy: 1e-12)
    }
}
