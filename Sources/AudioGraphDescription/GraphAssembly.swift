// A graph description as engine objects: the open graph its nodes and connections make, and the
// pending-change lists its updates make (one assembly for the builder and the validator).
import AudioGraphCore

/// Turns a graph description into an open ``AudioGraph`` and its updates into pending-change
/// lists. AudioGraphKit's `GraphLoader.build` initializes what this assembles; ``GraphRules`` resolves it.
///
/// Thread safety: control threads only (creating a player opens its file).
package enum GraphAssembly {
    /// An open graph with every node of `description` created and connected (what AudioGraphKit's `GraphLoader.build`
    /// initializes, and what the graph-file validator resolves: one assembly for both).
    /// - Throws: the engine's error with the JSON location of the node or connection it came from.
    package static func assemble(_ d: GraphDescription, maximumFramesPerSlice: Int? = nil, outputs: OutputPlacement,
                         prepare: ((GraphNode) -> Void)? = nil) throws(LocatedEngineError) -> AudioGraph {
        let graph = AudioGraph(sampleRate: d.sampleRate,
                               maximumFramesPerSlice: maximumFramesPerSlice ?? d.maximumFramesPerSlice)
        for (index, n) in d.nodes.enumerated() {
            do {
                let node = try NodeFactory.makeNode(n, sampleRate: d.sampleRate, outputs: outputs)
                prepare?(node)
                try graph.addNode(node)
            } catch {
                throw LocatedEngineError(error, at: "nodes[\(index)] (id \"\(n.id)\")")
            }
        }
        for (index, c) in d.connections.enumerated() {
            do {
                if let parameter = c.parameter {
                    try graph.connect(c.from.node, outputBus: c.from.bus, to: c.to.node, parameter: parameter)
                } else {
                    try graph.connect(c.from.node, outputBus: c.from.bus, to: c.to.node, inputBus: c.to.bus)
                }
            } catch {
                throw LocatedEngineError(error, at: "connections[\(index)]")
            }
        }
        return graph
    }

    /// The pending-change list for one update's actions (nodes it adds are created here, off the
    /// render thread).
    package static func changes(for update: UpdateDescription, sampleRate: Double,
                               outputs: OutputPlacement = .asDescribed) throws(AudioGraphError) -> [PendingChange] {
        var list: [PendingChange] = []
        for action in update.actions {
            switch action {
            case let .setParameter(node, address, value, ramp):
                list.append(.setParameter(node: node, address: address, value: value, rampDuration: ramp))
            case .connect(let c):
                list.append(.connect(source: c.from.node, sourceBus: c.from.bus, destination: c.to.node, destinationBus: c.to.bus))
            case .disconnect(let to):
                list.append(.disconnect(destination: to.node, destinationBus: to.bus))
            case .addNode(let n):
                list.append(.addNode(try NodeFactory.makeNode(n, sampleRate: sampleRate, outputs: outputs)))
            case .removeNode(let id):
                list.append(.removeNode(id))
            case let .setProperty(node, name, value, configuration):
                list.append(.setProperty(node: node, name: name,
                                         value: typedPropertyValue(name, configuration: configuration) ?? value.propertyValue))
            }
        }
        return list
    }
}

/// The typed value of property `name` in a node's configuration after a change (what the nodes'
/// `validateProperty` expect), or nil when the property has no typed form.
func typedPropertyValue(_ name: String, configuration: NodeConfiguration) -> (any Sendable)? {
    guard case .registered(let r) = configuration else { return nil }
    return r.type.descriptor?.typedProperty(name, r.options)
}

extension JSONValue {
    /// The value as a node property receives it: Bool, Double, String, [any Sendable],
    /// [String: any Sendable], or nil for JSON null.
    package var propertyValue: any Sendable {
        switch self {
        case .null: return Optional<Double>.none as any Sendable
        case .bool(let b): return b
        case .number(let n): return n.value
        case .string(let s): return s
        case .array(let a): return a.map(\.propertyValue)
        case .object(let o):
            var d: [String: any Sendable] = [:]
            for m in o { d[m.key] = m.value.propertyValue }
            return d
        }
    }
}
