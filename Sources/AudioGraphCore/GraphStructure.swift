// The graph's structural rules, written once: missing node, duplicate id, bus range, taken input, cycle, disconnect, output count.

/// One end of a connection: a node's bus.
///
/// Thread safety: a value type; safe to share between threads.
package struct BusPoint: Hashable, Sendable {
    package var node: String
    package var bus: Int

    package init(node: String, bus: Int) {
        self.node = node
        self.bus = bus
    }
}

/// A node as the structural rules see it: its id, bus counts and whether it is an output.
///
/// Thread safety: a value type; safe to share between threads.
package struct NodeShape: Hashable, Sendable {
    package var id: String
    package var inputBusCount: Int
    package var outputBusCount: Int
    package var isOutput: Bool

    package init(id: String, inputBusCount: Int, outputBusCount: Int, isOutput: Bool) {
        self.id = id
        self.inputBusCount = inputBusCount
        self.outputBusCount = outputBusCount
        self.isOutput = isOutput
    }
}

/// One structural edit of a graph (what the pending changes `addNode`, `removeNode`, `connect`
/// and `disconnect` do to its shape).
///
/// Thread safety: a value type; safe to share between threads.
package enum StructuralEdit: Sendable {
    case addNode(NodeShape)
    case removeNode(String)
    case connect(source: BusPoint, destination: BusPoint)
    case disconnect(BusPoint)
}

/// What a structural problem is about: the edit's node, or one end of its connection (so a
/// front door can say where: a graph file's `from`/`to`, the engine API's node).
package enum StructuralProblemSite: Sendable, Hashable {
    case node
    case source
    case destination
}

/// The nodes and connections of a graph as the structural rules see them, and the rules
/// themselves, written once for every front door: `AudioGraph`'s edits (the AUGraph-style API,
/// and the graph files' assembly and updates), the graph-file checker (which maps each problem
/// to its JSON location and carries on, to report every problem of a file) and the engine API
/// (whose structural misuse stops the program with its one-line message, as Apple's does).
///
/// The rules: a node's id is not taken; an edit names nodes in the graph; a bus index is below
/// the node's bus count on that side; an input bus takes one connection; a connection closes no
/// cycle (a node feeding itself included); a disconnect removes a connection that is there; a
/// graph has exactly one output node.
///
/// Thread safety: a value type; each owner keeps its own (the graph under its control mutex).
package struct GraphStructure: Sendable {
    /// The nodes by id.
    package private(set) var shapes: [String: NodeShape] = [:]
    /// Node ids in the order they were added.
    package private(set) var order: [String] = []
    /// Destination input bus → source output bus.
    package private(set) var connections: [BusPoint: BusPoint] = [:]
    /// Audio into parameters as the cycle rule sees them: source node → the nodes whose
    /// parameters it drives (one entry per connection; which parameter is the owner's concern).
    package private(set) var parameterEdges: [(source: String, destination: String)] = []

    package init() {}

    /// A structure with `shapes` (in `order`) and `connections`, taken as they are.
    package init(shapes: [String: NodeShape], order: [String], connections: [BusPoint: BusPoint]) {
        self.shapes = shapes
        self.order = order
        self.connections = connections
    }

    /// Every rule `edit` breaks here, in the order a front door reports them (for a connection:
    /// missing source, missing destination, source bus, destination bus, taken input, cycle).
    package func problems(_ edit: StructuralEdit) -> [(site: StructuralProblemSite, error: AudioGraphError)] {
        switch edit {
        case .addNode(let shape):
            return shapes[shape.id] == nil ? [] : [(.node, .duplicateNode(shape.id))]
        case .removeNode(let id):
            return shapes[id] == nil ? [(.node, .nodeNotFound(id))] : []
        case let .connect(source, destination):
            var found: [(StructuralProblemSite, AudioGraphError)] = []
            let s = shapes[source.node]
            let d = shapes[destination.node]
            if s == nil { found.append((.source, .nodeNotFound(source.node))) }
            if d == nil { found.append((.destination, .nodeNotFound(destination.node))) }
            if let s, !(0..<s.outputBusCount).contains(source.bus) {
                found.append((.source, .busOutOfRange(node: source.node, scope: .output, bus: source.bus, count: s.outputBusCount)))
            }
            if let d, !(0..<d.inputBusCount).contains(destination.bus) {
                found.append((.destination, .busOutOfRange(node: destination.node, scope: .input, bus: destination.bus, count: d.inputBusCount)))
            }
            guard found.isEmpty else { return found }
            if connections[destination] != nil {
                return [(.destination, .inputAlreadyConnected(node: destination.node, bus: destination.bus))]
            }
            if source.node == destination.node || reaches(from: destination.node, to: source.node) {
                return [(.destination, .cycle(node: destination.node))]
            }
            return []
        case .disconnect(let destination):
            guard let d = shapes[destination.node] else { return [(.destination, .nodeNotFound(destination.node))] }
            guard (0..<d.inputBusCount).contains(destination.bus) else {
                return [(.destination, .busOutOfRange(node: destination.node, scope: .input, bus: destination.bus, count: d.inputBusCount))]
            }
            guard connections[destination] != nil else {
                return [(.destination, .inputNotConnected(node: destination.node, bus: destination.bus))]
            }
            return []
        }
    }

    /// Applies `edit` when it breaks no rule.
    /// - Throws: the first problem (``problems(_:)``); the structure is then unchanged.
    package mutating func apply(_ edit: StructuralEdit) throws(AudioGraphError) {
        if let first = problems(edit).first { throw first.error }
        commit(edit)
    }

    /// Applies `edit` without checking it (a caller that checked it, or reported its problems and
    /// carries on: a connection to a missing node or bus is not made; a second connection to an
    /// input replaces nothing; a removed node takes its connections with it).
    package mutating func commit(_ edit: StructuralEdit) {
        switch edit {
        case .addNode(let shape):
            if shapes[shape.id] == nil { order.append(shape.id) }
            shapes[shape.id] = shape
        case .removeNode(let id):
            guard shapes[id] != nil else { return }
            shapes[id] = nil
            order.removeAll { $0 == id }
            connections = connections.filter { $0.key.node != id && $0.value.node != id }
            parameterEdges.removeAll { $0.source == id || $0.destination == id }
        case let .connect(source, destination):
            guard let s = shapes[source.node], let d = shapes[destination.node], (0..<s.outputBusCount).contains(source.bus),
                  (0..<d.inputBusCount).contains(destination.bus), connections[destination] == nil else { return }
            connections[destination] = source
        case .disconnect(let destination):
            connections[destination] = nil
        }
    }

    /// Records that `source`'s audio drives a parameter of `destination` (the caller checked the
    /// nodes, the bus, the parameter and the cycle rule: ``reaches(from:to:)``).
    package mutating func addParameterEdge(from source: String, to destination: String) {
        parameterEdges.append((source, destination))
    }

    /// Removes one such edge.
    package mutating func removeParameterEdge(from source: String, to destination: String) {
        if let i = parameterEdges.firstIndex(where: { $0.source == source && $0.destination == destination }) {
            parameterEdges.remove(at: i)
        }
    }

    /// Whether audio flows from `a` to `b` (b is downstream of a through inputs or parameters, or is a).
    package func reaches(from a: String, to b: String) -> Bool {
        var stack = [a]
        var seen: Set<String> = [a]
        while let n = stack.popLast() {
            if n == b { return true }
            for (dst, src) in connections where src.node == n && !seen.contains(dst.node) {
                seen.insert(dst.node)
                stack.append(dst.node)
            }
            for e in parameterEdges where e.source == n && !seen.contains(e.destination) {
                seen.insert(e.destination)
                stack.append(e.destination)
            }
        }
        return false
    }

    /// The output nodes' ids, in order.
    package var outputIDs: [String] { order.filter { shapes[$0]?.isOutput == true } }

    /// Exactly one output node.
    package func checkOutputCount() throws(AudioGraphError) {
        let count = outputIDs.count
        guard count == 1 else { throw .outputNodeCount(count) }
    }
}
