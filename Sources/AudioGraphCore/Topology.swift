// The graph's nodes and connections as a value: edited on a copy, validated, then committed.

/// Nodes and connections of a graph, as a value that a change list is applied to on a copy.
/// Thread safety: a value; the graph keeps its own under its control mutex.
struct Topology {
    var nodes: [String: GraphNode]
    var order: [String]
    /// Destination input bus → source output bus.
    var connections: [AudioGraph.BusKey: AudioGraph.BusKey]
    /// Output buses feeding parameters (audio into parameters), in the order made.
    var parameterConnections: [ParameterConnection] = []

    /// Applies one structural change, validating it against the topology so far.
    mutating func apply(_ change: PendingChange) throws(AudioGraphError) {
        switch change {
        case .addNode(let n):
            guard nodes[n.id] == nil else { throw .duplicateNode(n.id) }
            nodes[n.id] = n
            order.append(n.id)
        case .removeNode(let id):
            guard nodes[id] != nil else { throw .nodeNotFound(id) }
            nodes[id] = nil
            order.removeAll { $0 == id }
            connections = connections.filter { $0.key.node != id && $0.value.node != id }
            parameterConnections.removeAll { $0.source == id || $0.destination == id }
        case let .connect(source, sourceBus, destination, destinationBus):
            guard let s = nodes[source] else { throw .nodeNotFound(source) }
            guard let d = nodes[destination] else { throw .nodeNotFound(destination) }
            guard sourceBus >= 0 && sourceBus < s.outputBusCount else {
                throw .busOutOfRange(node: source, scope: .output, bus: sourceBus, count: s.outputBusCount)
            }
            guard destinationBus >= 0 && destinationBus < d.inputBusCount else {
                throw .busOutOfRange(node: destination, scope: .input, bus: destinationBus, count: d.inputBusCount)
            }
            let key = AudioGraph.BusKey(node: destination, bus: destinationBus)
            guard connections[key] == nil else { throw .inputAlreadyConnected(node: destination, bus: destinationBus) }
            if source == destination || reaches(from: destination, to: source) { throw .cycle(node: destination) }
            connections[key] = AudioGraph.BusKey(node: source, bus: sourceBus)
        case let .disconnect(destination, destinationBus):
            guard let d = nodes[destination] else { throw .nodeNotFound(destination) }
            guard destinationBus >= 0 && destinationBus < d.inputBusCount else {
                throw .busOutOfRange(node: destination, scope: .input, bus: destinationBus, count: d.inputBusCount)
            }
            let key = AudioGraph.BusKey(node: destination, bus: destinationBus)
            guard connections[key] != nil else { throw .inputNotConnected(node: destination, bus: destinationBus) }
            connections[key] = nil
        case let .connectParameter(source, sourceBus, destination, parameter):
            let c = try checkedParameterConnection(source, sourceBus, destination, parameter)
            guard !parameterConnections.contains(c) else {
                throw .invalidState("\"\(source)\" output \(sourceBus) is already connected to parameter \(parameter) of \"\(destination)\"")
            }
            if source == destination || reaches(from: destination, to: source) { throw .cycle(node: destination) }
            parameterConnections.append(c)
        case let .disconnectParameter(source, sourceBus, destination, parameter):
            let c = try checkedParameterConnection(source, sourceBus, destination, parameter)
            guard let i = parameterConnections.firstIndex(of: c) else {
                throw .invalidState("\"\(source)\" output \(sourceBus) is not connected to parameter \(parameter) of \"\(destination)\"")
            }
            parameterConnections.remove(at: i)
        case .setParameter, .setProperty:
            break
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
    func reaches(from a: String, to b: String) -> Bool {
        var stack = [a]
        var seen: Set<String> = [a]
        while let n = stack.popLast() {
            if n == b { return true }
            for (dst, src) in connections where src.node == n && !seen.contains(dst.node) {
                seen.insert(dst.node)
                stack.append(dst.node)
            }
            for c in parameterConnections where c.source == n && !seen.contains(c.destination) {
                seen.insert(c.destination)
                stack.append(c.destination)
            }
        }
        return false
    }

    /// Exactly one output node.
    func checkOutputCount() throws(AudioGraphError) {
        let count = nodes.values.filter(\.isOutputNode).count
        guard count == 1 else { throw .outputNodeCount(count) }
    }

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
