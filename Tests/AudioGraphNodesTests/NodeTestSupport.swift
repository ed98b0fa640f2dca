// Helpers for the node tests: build a graph ending in a generic output, render it offline, measure.
import AudioGraphCore
import AudioGraphTesting
import Foundation
import XCTest
@testable import AudioGraphNodes

/// Builds a graph from nodes plus a `GenericOutputNode` "out" and connection lines
/// (`a -> mix:1`, `mix -> out`), initializes and starts it.
func startedGraph(_ nodes: [GraphNode], _ connections: String, sampleRate: Double = 48000,
                  slice: Int = 512, output: GenericOutputNode = GenericOutputNode(id: "out")) throws -> AudioGraph {
    let g = AudioGraph(sampleRate: sampleRate, maximumFramesPerSlice: slice)
    for n in nodes { try g.addNode(n) }
    try g.addNode(output)
    for line in connections.split(whereSeparator: { $0 == "\n" || $0 == ";" }) {
        let hops = line.components(separatedBy: "->").map { $0.trimmingCharacters(in: .whitespaces) }
        for i in 0..<(hops.count - 1) {
            let s = hops[i].split(separator: ":"), d = hops[i + 1].split(separator: ":")
            try g.connect(String(s[0]), outputBus: s.count > 1 ? Int(s[1])! : 0, to: String(d[0]), inputBus: d.count > 1 ? Int(d[1])! : 0)
        }
    }
    try g.initialize()
    try g.start()
    return g
}

/// Renders `frames` frames in slices of `slice` (or the given slice pattern, cycled) and returns
/// each channel of the output (`channels` of them; silence when nothing reached the output).
func renderFrames(_ g: AudioGraph, frames: Int, channels: Int, slices: [Int]? = nil) -> [[Float]] {
    var out = [[Float]](repeating: [], count: channels)
    var done = 0
    var k = 0
    while done < frames {
        let pattern = slices ?? [g.maximumFramesPerSlice]
        let n = min(pattern[k % pattern.count], frames - done, g.maximumFramesPerSlice)
        k += 1
        let r = g.render(frameCount: n)
        for c in 0..<channels {
            if let r, c < r.channelCount {
                out[c] += UnsafeBufferPointer(start: r.buffer.channel(c), count: n)
            } else {
                out[c] += [Float](repeating: 0, count: n)
            }
        }
        done += n
    }
    return out
}

/// Least-squares fit of a tone at frequency `f` plus DC (AudioGraphTesting's `ToneFit`): returns the
/// tone's amplitude and the RMS of the residual.
func toneFit(_ x: [Float], frequency f: Double, sampleRate sr: Double) -> (amplitude: Double, residualRMS: Double) {
    let fit = ToneFit(x, sampleRate: sr, frequencies: [f])
    return (fit.tones[0].amplitude, fit.residualRMS)
}

/// Magnitude of the DFT of `x` at `frequency` (Hz), normalized so a sine of amplitude A gives A.
func dftMagnitude(_ x: [Float], frequency: Double, sampleRate: Double) -> Double {
    var re = 0.0, im = 0.0
    for (n, y) in x.enumerated() {
        let w = 2 * Double.pi * frequency * Double(n) / sampleRate
        re += Double(y) * cos(w)
        im -= Double(y) * sin(w)
    }
    return 2 * (re * re + im * im).squareRoot() / Double(x.count)
}

/// A constant-per-channel or formula source built on a render callback: `value(channel, frame)`
/// where frame counts on the source's own timeline.
func formulaSource(_ id: String, channels: Int, sampleRate: Double? = nil,
                   _ value: @escaping @Sendable (Int, Int64) -> Float) -> RenderCallbackNode {
    RenderCallbackNode(id: id, channels: channels, sampleRate: sampleRate) { context, buffer in
        for c in 0..<buffer.channelCount {
            let p = buffer.channel(c)
            for i in 0..<context.frameCount { p[i] = value(c, context.sampleTime + Int64(i)) }
        }
        return false
    }
}

/// The Fourier series of the unit band-limited waves, written out term by term with libm's sin:
/// every harmonic k <= min(512, floor(sampleRate / 2 / frequency)) of sin(k theta), weighted
/// 4/(pi k) (square, odd k), 2/(pi k) alternating (sawtooth), 8/(pi^2 k^2) alternating (triangle,
/// odd k). The independent reference for the oscillator and BandLimitedSeries tests.
func fourierSeries(_ w: Waveform, theta: Double, frequency f: Double, sampleRate sr: Double) -> Double {
    let top = min(512, Int(sr / 2 / f))
    if top < 1 { return 0 }
    var sum = 0.0
    for k in 1...top {
        let kd = Double(k)
        switch w {
        case .square where k % 2 == 1: sum += 4 / Double.pi * sin(kd * theta) / kd
        case .sawtooth: sum += 2 / Double.pi * (k % 2 == 1 ? 1 : -1) * sin(kd * theta) / kd
        case .triangle where k % 2 == 1: sum += 8 / (Double.pi * Double.pi) * (k % 4 == 1 ? 1 : -1) * sin(kd * theta) / (kd * kd)
        default: break
        }
    }
    return sum
}

extension XCTestCase: TeardownRegistering {}
