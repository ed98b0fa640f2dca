// The graph's nodes and connections as a value: edited on a copy, validated, then committed.

/// Nodes and connections of a graph, as a value that a change list is applied to on a copy.
/// The structural rules are ``GraphStructure``'s (the one copy every front door uses); this adds
/// the nodes themselves.
/// Thread safety: a value; the graph keeps its own under its control mutex.
struct Topology {
    var nodes: [String: GraphNode]
    /// The shape and the rules.
    private(set) var structure: GraphStructure

    init(nodes: [String: GraphNode], order: [String], connections: [AudioGraph.BusKey: AudioGraph.BusKey]) {
        self.nodes = nodes
        structure = GraphStructure(shapes: nodes.mapValues { $0.shape }, order: order, connections: connections)
    }

    var order: [String] { structure.order }
    /// Destination input bus → source output bus.
    var connections: [AudioGraph.BusKey: AudioGraph.BusKey] { structure.connections }

    /// Applies one structural change, validating it against the topology so far.
    mutating func apply(_ change: PendingChange) throws(AudioGraphError) {
        guard let edit = change.structuralEdit else { return }
        try structure.apply(edit)
        switch change {
        case .addNode(let n): nodes[n.id] = n
        case .removeNode(let id): nodes[id] = nil
        default: break
        }
    }

    /// Whether audio flows from `a` to `b` (b is downstream of a).
    func reaches(from a: String, to b: String) -> Bool { structure.reaches(from: a, to: b) }

    /// Exactly one output node.
    func checkOutputCount() throws(AudioGraphError) { try structure.checkOutputCount() }

    /// Node ids with every source before the nodes it feeds (Kahn's algorithm, stable by
    /// insertion order). Throws on a cycle, naming a node in it.
    func topologicalOrder() throws(AudioGraphError) -> [String] {
        var indegree: [String: Int] = [:]
        var downstream: [String: [String]] = [:]
        for id in order { indegree[id] = 0 }
        for (dst, src) in connections {
            indegree[dst.node, default: 0] += 1
            downstream[src.node, default: []].append(dst.node)
        }
        var ready = order.filter { indegree[$0] == 0 }
        var result: [String] = []
        var i = 0
        while i < ready.count {
            let n = ready[i]
            i += 1
            result.append(n)
            for d in downstream[n] ?? [] {
                indegree[d]! -= 1
                if indegree[d] == 0 { ready.append(d) }
            }
        }
        if result.count < order.count, let stuck = order.first(where: { indegree[$0]! > 0 }) {
            throw .cycle(node: stuck)
        }
        return result
    }
}

extension GraphNode {
    /// The node as the structural rules see it.
    package var shape: NodeShape {
        NodeShape(id: id, inputBusCount: inputBusCount, outputBusCount: outputBusCount, isOutput: isOutputNode)
    }
}

extension PendingChange {
    /// What the change does to the graph's shape (nil for parameter and property changes).
    package var structuralEdit: StructuralEdit? {
        switch self {
        case .addNode(let n): return .addNode(n.shape)
        case .removeNode(let id): return .removeNode(id)
        case let .connect(source, sourceBus, destination, destinationBus):
            return .connect(source: BusPoint(node: source, bus: sourceBus), destination: BusPoint(node: destination, bus: destinationBus))
        case let .disconnect(destination, destinationBus): return .disconnect(BusPoint(node: destination, bus: destinationBus))
        case .setParameter, .setProperty: return nil
        }
    }
}
