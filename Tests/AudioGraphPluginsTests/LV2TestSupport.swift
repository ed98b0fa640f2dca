// Helpers for the LV2 tests: a graph of nodes ending in a generic output, rendered offline.
import AudioGraphCore
import AudioGraphNodes
import Foundation

/// Builds and starts a graph of `nodes` plus a generic output "out", wired by `chain` (ids in
/// order, each feeding the next, ending at "out").
func startedChain(_ nodes: [GraphNode], _ chain: [String], sampleRate: Double = 48000, slice: Int = 256) throws -> AudioGraph {
    let g = AudioGraph(sampleRate: sampleRate, maximumFramesPerSlice: slice)
    for n in nodes { try g.addNode(n) }
    try g.addNode(GenericOutputNode(id: "out"))
    let ids = chain + ["out"]
    for i in 0..<(ids.count - 1) { try g.connect(ids[i], outputBus: 0, to: ids[i + 1], inputBus: 0) }
    try g.initialize()
    try g.start()
    return g
}

/// Renders `frames` frames in slices of the graph's maximum and returns each output channel.
func render(_ g: AudioGraph, frames: Int, channels: Int) -> [[Float]] {
    var out = [[Float]](repeating: [], count: channels)
    var done = 0
    while done < frames {
        let n = min(g.maximumFramesPerSlice, frames - done)
        let r = g.render(frameCount: n)
        for c in 0..<channels {
            if let r, c < r.channelCount { out[c] += UnsafeBufferPointer(start: r.buffer.channel(c), count: n) }
            else { out[c] += [Float](repeating: 0, count: n) }
        }
        done += n
    }
    return out
}

/// A source of `channels` channels whose sample at (channel, frame) is `value`.
func formulaSource(_ id: String, channels: Int, _ value: @escaping @Sendable (Int, Int64) -> Float) -> RenderCallbackNode {
    RenderCallbackNode(id: id, channels: channels, sampleRate: nil) { context, buffer in
        for c in 0..<buffer.channelCount {
            let p = buffer.channel(c)
            for i in 0..<context.frameCount { p[i] = value(c, context.sampleTime + Int64(i)) }
        }
        return false
    }
}

/// The swh plugins the tests use (Debian's swh-lv2).
enum SWH {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"
    static let stereoToMidSide = "http://plugin.org.uk/swh-plugins/matrixStMS"
    static let artificialLatency = "http://plugin.org.uk/swh-plugins/artificialLatency"
}
