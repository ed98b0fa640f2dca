// The graph's nodes and connections as a value: edited on a copy, validated, then committed.

/// Nodes and connections of a graph, as a value that a change list is applied to on a copy.
/// The structural rules are ``GraphStructure``'s (the one copy every front door uses); this adds
/// the nodes themselves.
/// Thread safety: a value; the graph keeps its own under its control mutex.
struct Topology {
    var nodes: [String: GraphNode]
    /// The shape and the rules.
    private(set) var structure: GraphStructure

    init(nodes: [String: GraphNode], order: [String], connections: [AudioGraph.BusKey: AudioGraph.BusKey],
         parameterConnections: [ParameterConnection] = []) {
        self.nodes = nodes
        structure = GraphStructure(shapes: nodes.mapValues { $0.shape }, order: order, connections: connections)
        self.parameterConnections = parameterConnections
        for c in parameterConnections { structure.addParameterEdge(from: c.source, to: c.destination) }
    }

    var order: [String] { structure.order }
    /// Destination input bus → source output bus.
    var connections: [AudioGraph.BusKey: AudioGraph.BusKey] { structure.connections }
    /// Output buses feeding parameters (audio into parameters), in the order made.
    private(set) var parameterConnections: [ParameterConnection] = []

    /// Applies one structural change, validating it against the topology so far.
    mutating func apply(_ change: PendingChange) throws(AudioGraphError) {
        if case .addNode(let n) = change {
            // Before the node can render: its kernel calls these libraries without checking.
            for library in n.requiredLibraries {
                if let reason = library.loadFailure {
                    throw .libraryNotLoadable(node: n.id, library: library.name, reason: reason)
                }
            }
        }
        if let edit = change.structuralEdit { try structure.apply(edit) }
        switch change {
        case .addNode(let n): nodes[n.id] = n
        case .removeNode(let id):
            nodes[id] = nil
            parameterConnections.removeAll { $0.source == id || $0.destination == id }
        case let .connectParameter(source, sourceBus, destination, parameter):
            let c = try checkedParameterConnection(source, sourceBus, destination, parameter)
            guard !parameterConnections.contains(c) else {
                throw .invalidState("\"\(source)\" output \(sourceBus) is already connected to parameter \(parameter) of \"\(destination)\"")
            }
            if source == destination || reaches(from: destination, to: source) { throw .cycle(node: destination) }
            parameterConnections.append(c)
            structure.addParameterEdge(from: source, to: destination)
        case let .disconnectParameter(source, sourceBus, destination, parameter):
            let c = try checkedParameterConnection(source, sourceBus, destination, parameter)
            guard let i = parameterConnections.firstIndex(of: c) else {
                throw .invalidState("\"\(source)\" output \(sourceBus) is not connected to parameter \(parameter) of \"\(destination)\"")
            }
            parameterConnections.remove(at: i)
            structure.removeParameterEdge(from: source, to: destination)
        default: break
        }
    }

    /// A parameter connection between existing nodes, buses and parameters.
    private func checkedParameterConnection(_ source: String, _ sourceBus: Int, _ destination: String,
                                            _ parameter: ParameterAddress) throws(AudioGraphError) -> ParameterConnection {
        guard let s = nodes[source] else { throw .nodeNotFound(source) }
        guard let d = nodes[destination] else { throw .nodeNotFound(destination) }
        guard sourceBus >= 0 && sourceBus < s.outputBusCount else {
            throw .busOutOfRange(node: source, scope: .output, bus: sourceBus, count: s.outputBusCount)
        }
        guard d.parameterIndex(of: parameter) != nil else { throw .parameterNotFound(node: destination, address: parameter.description) }
        return ParameterConnection(source: source, sourceBus: sourceBus, destination: destination, parameter: parameter)
    }

    /// Whether audio flows from `a` to `b` (b is downstream of a, through inputs or parameters).
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
        // A modulating node renders before the node whose parameter it drives.
        for c in parameterConnections {
            indegree[c.destination, default: 0] += 1
            downstream[c.source, default: []].append(c.destination)
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
        case .setParameter, .setProperty, .connectParameter, .disconnectParameter: return nil
        }
    }
}
