// Building, starting and rendering small node graphs offline for tests (a generic output at the end).
import AudioGraphCore
import AudioGraphNodes

/// Builds a graph from nodes plus a `GenericOutputNode` "out" and connection lines
/// (`a -> mix:1`, `mix -> out`), initializes and starts it.
/// `configure` runs before `initialize()` (for edits the text cannot say: parameter connections).
public func startedGraph(_ nodes: [GraphNode], _ connections: String, sampleRate: Double = 48000,
                         slice: Int = 512, output: GenericOutputNode = GenericOutputNode(id: "out"),
                         configure: ((AudioGraph) throws -> Void)? = nil) throws -> AudioGraph {
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
    try configure?(g)
    try g.initialize()
    try g.start()
    return g
}

/// Renders `frames` frames in slices of `slice` (or the given slice pattern, cycled) and returns
/// each channel of the output (`channels` of them; silence when nothing reached the output).
public func renderFrames(_ g: AudioGraph, frames: Int, channels: Int, slices: [Int]? = nil) -> [[Float]] {
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

/// A constant-per-channel or formula source built on a render callback: `value(channel, frame)`
/// where frame counts on the source's own timeline.
public func formulaSource(_ id: String, channels: Int, sampleRate: Double? = nil,
                          _ value: @escaping @Sendable (Int, Int64) -> Float) -> RenderCallbackNode {
    RenderCallbackNode(id: id, channels: channels, sampleRate: sampleRate) { context, buffer in
        for c in 0..<buffer.channelCount {
            let p = buffer.channel(c)
            for i in 0..<context.frameCount { p[i] = value(c, context.sampleTime + Int64(i)) }
        }
        return false
    }
}
