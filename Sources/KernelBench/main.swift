// Per-kernel throughput of the stock DSP (release build): `scripts/bench-kernels.sh` prints it next to C floors.
//
// usage: KernelBench [SECONDS_OF_AUDIO [CASE...]]   (default 10 s, every case)
//
// Each line is `name  M samples/s` where a sample is one channel-sample through one kernel (for
// the EQ cascade one channel-sample through one biquad section). The kernels run on 512-frame
// slices at 48 kHz, as the offline renderer drives them; the graph cases (`eq10`, `sine`,
// `eq-graph`) also pay the render plan's per-node cost.

import AudioGraphCore
import AudioGraphNodes
import Foundation

let seconds = CommandLine.arguments.count > 1 ? Double(CommandLine.arguments[1]) ?? 10 : 10
/// Further arguments name the cases to run (all when none), e.g. `KernelBench 20 eq-graph` under `perf record`.
let only = Set(CommandLine.arguments.dropFirst(2))
func wanted(_ name: String) -> Bool { only.isEmpty || only.contains(name) }
// KERNEL_BENCH_NO_AVX2=1: the biquad wavefront's Swift loops even where the AVX2 ones would run.
if ProcessInfo.processInfo.environment["KERNEL_BENCH_NO_AVX2"] != nil { Biquad.wavefrontAVX2 = false }
// KERNEL_BENCH_NO_SINGLE_AVX2=1: an odd channel's wavefront in the Swift loop, the pairs' in AVX2.
if ProcessInfo.processInfo.environment["KERNEL_BENCH_NO_SINGLE_AVX2"] != nil { Biquad.singleWavefrontAVX2 = false }
let rate = 48000.0
let block = 512
let blocks = Int(seconds * rate) / block
let frames = Double(blocks * block)
nonisolated(unsafe) var sink: Float = 0

/// The thread's CPU time (as the C floors time themselves): on a shared machine the wall clock
/// mostly measures the scheduler.
func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}
func report(_ name: String, _ samples: Double, _ start: Double) {
    let s = now() - start
    print(name.padding(toLength: 10, withPad: " ", startingAt: 0), String(format: "%9.1f", samples / s * 1e-6))
}

/// A buffer of seeded noise (LCG, as the C floors), amplitude 0.5.
func noise(_ count: Int, seed: UInt32) -> UnsafeMutablePointer<Float> {
    let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
    var s = seed
    for i in 0..<count {
        s = s &* 1664525 &+ 1013904223
        p[i] = Float(Double(s >> 8) / 8388608.0 - 1.0) * 0.5
    }
    return p
}

func pointers(_ base: UnsafeMutablePointer<Float>, _ channels: Int) -> (UnsafeBufferPointer<UnsafePointer<Float>>, UnsafeBufferPointer<UnsafeMutablePointer<Float>>) {
    let i = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
    let o = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
    for c in 0..<channels { i[c] = UnsafePointer(base + c * block); o[c] = base + c * block }
    return (UnsafeBufferPointer(start: i, count: channels), UnsafeBufferPointer(start: o, count: channels))
}

// B2's cascade: 10 RBJ peaking sections, Q 1, +6/-6 dB alternating, filtered in place as the eq
// node does (`Biquad.processSteadyCascade`), stereo ("biquad") and mono ("biquad1", B6's EQs);
// "biquad-b" runs the same sections band by band (`Biquad.process`, what an eq node does while
// a band glides).
func biquad(channels: Int, name: String, bandByBand: Bool = false) {
    let source = noise(channels * block, seed: 1), work = UnsafeMutablePointer<Float>.allocate(capacity: channels * block)
    let (ins, outs) = pointers(work, channels)
    let freqs: [Double] = [31, 62, 125, 250, 500, 1000, 2000, 4000, 8000, 16000]
    let filters = ContiguousArray(freqs.enumerated().map { k, f in
        Biquad(band: EQBand(type: .peak, frequency: f, gain: k % 2 == 0 ? 6 : -6, q: 1), sampleRate: rate,
               maximumChannelCount: channels)
    })
    let scratch = Biquad.cascadeScratchCounts(sections: filters.count, channels: channels)
    let coefficients = UnsafeMutablePointer<Double>.allocate(capacity: scratch.coefficients)
    let state = UnsafeMutablePointer<Double>.allocate(capacity: scratch.state)
    let t0 = now()
    for b in 0..<blocks {
        work.update(from: source, count: channels * block)
        if bandByBand {
            for f in filters { f.process(input: ins, output: outs, frameCount: block, startFrame: Int64(b * block)) }
        } else {
            Biquad.processSteadyCascade(filters, channels: channels, buffers: outs, frameCount: block,
                                        coefficients: coefficients, state: state)
        }
        sink += work[block - 1]
    }
    report(name, frames * Double(channels) * 10, t0)
}

// B3's delay: 250 ms, feedback 50 %, wet 50 %, the default 15 kHz low-pass, stereo.
func delay() {
    let source = noise(2 * block, seed: 2), work = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
    let (ins, outs) = pointers(work, 2)
    let line = DelayLine(sampleRate: rate, maximumChannelCount: 2, delayTime: 0.25, feedback: 50,
                         lowPassCutoff: 15000, wetDryMix: 50)
    let t0 = now()
    for _ in 0..<blocks {
        work.update(from: source, count: 2 * block)
        line.process(input: ins, output: outs, frameCount: block)
        sink += work[block - 1]
    }
    report("delay", frames * 2, t0)
}

// B1's mix: 32 mono inputs, constant volume 0.8 and pan spread -1...1, summed into stereo two
// inputs at a time, as the mixer node does with constant values (its pan gains computed once).
func mix() {
    let n = 32
    let source = noise(n * block, seed: 3)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
    let gains = (0..<n).map { k in ChannelMixing.monoPanGains(pan: Float(2 * Double(k) / Double(n - 1) - 1)) }
    let t0 = now()
    for _ in 0..<blocks {
        left.update(repeating: 0, count: block)
        right.update(repeating: 0, count: block)
        for k in stride(from: 0, to: n, by: 2) {
            ChannelMixing.accumulateMonoPair(source + k * block, gain: 0.8, left: gains[k].left, right: gains[k].right,
                                             source + (k + 1) * block, gain: 0.8, left: gains[k + 1].left, right: gains[k + 1].right,
                                             intoLeft: left, right: right, frameCount: block)
        }
        sink += left[block - 1]
    }
    report("mix", frames * Double(n), t0)
}

// Float -> interleaved int16 (a WAV writer's job) and back.
func convert() {
    let source = noise(2 * block, seed: 4), back = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
    let (ins, _) = pointers(source, 2)
    let (_, outs) = pointers(back, 2)
    let pcm = UnsafeMutableRawPointer.allocate(byteCount: 4 * block, alignment: 16)
    var t0 = now()
    for _ in 0..<blocks {
        SampleConversion.write(channels: ins, frameCount: block, to: pcm, as: .int16, interleaved: true)
        sink += Float(pcm.load(fromByteOffset: 2 * block, as: Int16.self))
    }
    report("to-int16", frames * 2, t0)
    t0 = now()
    for _ in 0..<blocks {
        SampleConversion.read(from: pcm, as: .int16, interleaved: true, frameCount: block, into: outs)
        sink += back[block]
    }
    report("from-int16", frames * 2, t0)
}

/// Renders `g` for the benchmark's length and reports `samplesPerFrame` kernel samples per frame.
func renderGraph(_ name: String, _ g: AudioGraph, samplesPerFrame: Double) {
    let t0 = now()
    for _ in 0..<blocks {
        if let r = g.render(frameCount: block) { sink += r.buffer.channel(0)[0] }
    }
    report(name, frames * samplesPerFrame, t0)
}

func graph(_ nodes: [GraphNode], _ chain: [String]) throws -> AudioGraph {
    let g = AudioGraph(sampleRate: rate, maximumFramesPerSlice: block)
    for n in nodes { try g.addNode(n) }
    try g.addNode(GenericOutputNode(id: "out"))
    for (a, b) in zip(chain, chain.dropFirst()) { try g.connect(a, to: b) }
    try g.initialize()
    try g.start()
    return g
}

// One mono sine oscillator straight to the output (the kernel plus one node's render cost).
func oscillatorGraph() throws {
    let osc = OscillatorNode(id: "osc", sampleRate: rate)
    try osc.setParameter("frequency", 441)
    try osc.setParameter("amplitude", 0.5)
    renderGraph("sine", try graph([osc], ["osc", "out"]), samplesPerFrame: 1)
}

// B2's cascade as a node: stereo noise through one eq node with the 10 bands (kernel + node cost).
func eq10Graph() throws {
    let src = OscillatorNode(id: "src", sampleRate: rate, properties: OscillatorProperties(waveform: .noise, channels: 2, seed: 1))
    let freqs: [Double] = [31, 62, 125, 250, 500, 1000, 2000, 4000, 8000, 16000]
    let eq = EQNode(id: "eq", sampleRate: rate, properties: EQProperties(bands: freqs.enumerated().map { k, f in
        EQBand(type: .peak, frequency: f, gain: k % 2 == 0 ? 6 : -6, q: 1)
    }))
    renderGraph("eq10", try graph([src, eq], ["src", "eq", "out"]), samplesPerFrame: 2 * 10)
}

// A mono noise source through 64 one-band eq nodes (the per-node cost of the scaling curve; the render
// plan fuses the chain into one cascade of the 64 sections, see EQChain).
func eqGraph() throws {
    let src = OscillatorNode(id: "src", sampleRate: rate, properties: OscillatorProperties(waveform: .noise, seed: 1))
    var nodes: [GraphNode] = [src]
    for i in 0..<64 {
        nodes.append(EQNode(id: "eq\(i)", sampleRate: rate,
                            properties: EQProperties(bands: [EQBand(type: .peak, frequency: Double(100 + 15 * i), gain: i % 2 == 0 ? -3 : 3)])))
    }
    renderGraph("eq-graph", try graph(nodes, ["src"] + (0..<64).map { "eq\($0)" } + ["out"]), samplesPerFrame: 64)
}

if wanted("biquad") { biquad(channels: 2, name: "biquad") }
if wanted("biquad1") { biquad(channels: 1, name: "biquad1") }
if wanted("biquad-b") { biquad(channels: 2, name: "biquad-b", bandByBand: true) }
if wanted("delay") { delay() }
if wanted("mix") { mix() }
if wanted("to-int16") || wanted("from-int16") { convert() }
if wanted("eq10") { try eq10Graph() }
if wanted("sine") { try oscillatorGraph() }
if wanted("eq-graph") { try eqGraph() }
if sink == .infinity { print(sink) }
