// The graph rule that bounds the cost of chained rate-changing nodes (varispeed, timePitch).

extension Topology {
    /// Checks that no node is pulled more than ``AudioGraph/maximumPullRatio`` input frames per
    /// output frame of the graph: each node's ratio is the largest over the nodes it feeds of
    /// their own ratio times what they pull per output frame
    /// (``GraphNode/maximumInputFramesPerOutputFrame``). A chain of rate-raising nodes costs
    /// the product of their rates (8 varispeeds at rate 4: 65,536 frames per output frame, 448 s
    /// for 0.1 s of audio), so such a graph is refused where the engine resolves formats — the
    /// step `validate` and `initialize` share — with the chain's first node named.
    func checkPullRatios(order: [String]) throws(AudioGraphError) {
        // Consumers of each node's outputs.
        var consumers: [String: [String]] = [:]
        for (destination, source) in connections { consumers[source.node, default: []].append(destination.node) }
        var ratio: [String: Double] = [:]
        // From the output towards the sources: every consumer comes later in `order`.
        for id in order.reversed() {
            var worst = 1.0
            for consumer in consumers[id] ?? [] {
                guard let node = nodes[consumer] else { continue }
                worst = max(worst, (ratio[consumer] ?? 1) * max(1, node.maximumInputFramesPerOutputFrame))
            }
            ratio[id] = worst
            if worst > AudioGraph.maximumPullRatio {
                throw .formatNotSupported(node: id, reason: "the rate-changing nodes after it pull \(Self.describe(worst)) of its frames "
                    + "per output frame (their rates multiply); at most \(Self.describe(AudioGraph.maximumPullRatio)) is rendered in reasonable time")
            }
        }
    }

    private static func describe(_ ratio: Double) -> String {
        ratio < 1e15 ? String(Int64(ratio.rounded())) : "more than 10^15"
    }
}

extension AudioGraph {
    /// The most frames of any node a graph may pull per frame of its output, through chained
    /// rate-changing nodes (``GraphNode/maximumInputFramesPerOutputFrame``): 1024 — two
    /// timePitch nodes at their fastest rate (32), five varispeeds at theirs (4).
    package static let maximumPullRatio = 1024.0
}
