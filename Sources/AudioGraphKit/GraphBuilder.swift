// Building a running engine graph from a validated graph description.
import AudioGraphNodes

/// A graph built from a description, initialized and ready to render.
public struct BuiltGraph: @unchecked Sendable {
    /// The engine graph (initialized).
    public let graph: AudioGraph
    /// What it was built from.
    public let validated: ValidatedGraph
    /// The graph's output node.
    public let outputNode: GraphNode
}

/// Turns graph descriptions into engine graphs, and their updates into pending-change lists.
///
/// Thread safety: control threads only.
public enum GraphBuilder {
    /// Creates every node, connects them and initializes the graph.
    ///
    /// - Parameters:
    ///   - maximumFramesPerSlice: overrides the description's (the CLI's `--slice`).
    ///   - outputs: what the output node becomes (offline: a generic output; live: PulseAudio).
    ///   - prepare: called with every node before the graph initializes (e.g. to give input
    ///     nodes their PulseAudio context).
    public static func build(_ validated: ValidatedGraph, maximumFramesPerSlice: Int? = nil,
                             outputs: OutputPlacement = .asDescribed,
                             prepare: ((GraphNode) -> Void)? = nil) throws(AudioGraphError) -> BuiltGraph {
        let graph: AudioGraph
        do {
            graph = try assemble(validated.description, maximumFramesPerSlice: maximumFramesPerSlice, outputs: outputs,
                                 prepare: prepare)
        } catch {
            throw error.error
        }
        try graph.initialize()
        guard let output = graph.outputNode else { throw .outputNodeCount(0) }
        return BuiltGraph(graph: graph, validated: validated, outputNode: output)
    }

    /// An open graph with every node of `description` created and connected (what ``build(_:maximumFramesPerSlice:outputs:prepare:)``
    /// initializes, and what the graph-file validator resolves: one assembly for both).
    /// - Throws: the engine's error with the JSON location of the node or connection it came from.
    static func assemble(_ d: GraphDescription, maximumFramesPerSlice: Int? = nil, outputs: OutputPlacement,
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
                try graph.connect(c.from.node, outputBus: c.from.bus, to: c.to.node, inputBus: c.to.bus)
            } catch {
                throw LocatedEngineError(error, at: "connections[\(index)]")
            }
        }
        return graph
    }

    /// The pending-change list for one update's actions (nodes it adds are created here, off the
    /// render thread).
    public static func changes(for update: UpdateDescription, sampleRate: Double,
                               outputs: OutputPlacement = .asDescribed) throws(AudioGraphError) -> [PendingChange] {
        var list: [PendingChange] = []
        for action in update.actions {
            switch action {
            case let .setParameter(node, address, value, ramp):
                list.append(.setParameter(node: node, address: address.description, value: value, rampDuration: ramp))
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
    switch (configuration, name) {
    case (.oscillator(let p), "waveform"): return p.waveform
    case (.oscillator(let p), "startTime"): return p.startTime
    case (.oscillator(let p), "stopTime"): return p.stopTime
    case (.player(let p), "loop"): return p.loop
    case (.player(let p), "startTime"): return p.startTime
    case (.player(let p), "segment"): return p.segment
    case (.environment(let p), "distanceModel"): return p.distanceModel
    case (.environment(let p), "reverb"): return p.reverb
    case (.converter(let p), "quality"): return p.quality
    default: return nil
    }
}

extension JSONValue {
    /// The value as a node property receives it: Bool, Double, String, [any Sendable],
    /// [String: any Sendable], or nil for JSON null.
    public var propertyValue: any Sendable {
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
