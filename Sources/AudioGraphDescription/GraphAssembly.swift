// A graph description as engine objects: its nodes (through their types' descriptors), the open graph they and
// the connections make, and the pending-change lists its updates make (one assembly for the builder and the checker).
import AudioGraphCore

/// The loader's last stage: turns a graph description's nodes into engine nodes (``makeNode(_:sampleRate:outputs:)``,
/// through the registered descriptors), the description into an open ``AudioGraph`` and its
/// updates into pending-change lists. AudioGraphOffline's `GraphLoader.build` initializes what this
/// assembles; ``GraphChecker`` resolves it for the engine's rules.
///
/// Thread safety: control threads only (creating a player opens its file).
package enum GraphAssembly {
    /// A node for `description`, made by its type's descriptor, with its declared format, initial
    /// parameter values and automation set (every node the loader, the checker and
    /// `AudioEngine(contentsOf:)` make from a file is made here).
    ///
    /// - Parameter outputs: what an output node becomes (see ``OutputPlacement``).
    package static func makeNode(_ description: NodeDescription, sampleRate: Double,
                                outputs: OutputPlacement = .asDescribed) throws(AudioGraphError) -> GraphNode {
        guard case .registered(let r) = description.configuration, let descriptor = r.type.descriptor else {
            throw .invalidProperty(node: description.id, name: "type", reason: "the node's type is not known")
        }
        let node = try descriptor.makeNode(NodeBuildContext(id: description.id, sampleRate: sampleRate,
                                                            inputBusCount: description.inputBusCount, options: r.options,
                                                            rendersOffline: outputs == .offline, placement: outputs))
        if let f = description.format {
            let declared = f.partialStreamFormat
            if declared.sampleRate != nil { node.declaredFormat.sampleRate = declared.sampleRate }
            if declared.channelCount != nil { node.declaredFormat.channelCount = declared.channelCount }
            // Processing is canonical float whatever these say; a node without an output bus
            // (genericOutput) refuses them rather than ignore them.
            if declared.sampleType != nil { node.declaredFormat.sampleType = declared.sampleType }
            if declared.isInterleaved != nil { node.declaredFormat.isInterleaved = declared.isInterleaved }
        }
        var initial = description.initialParameterValues(sampleRate: sampleRate)
        if case .registered = description.configuration {
            // A descriptor's factory may start parameters away from the table's defaults (the
            // distortion's `preset`): only the values the file writes override what it set.
            initial = initial.filter { description.parameters[$0.key] != nil }
        }
        for (address, value) in initial {
            guard let p = node.parameter(at: address) else { continue }
            try p.setValue(value)
        }
        for (address, events) in description.automation {
            guard let p = node.parameter(at: address) else { throw .parameterNotFound(node: node.id, address: address.description) }
            do {
                let timeline = try AutomationTimeline(events: events,
                                                      defaultValue: initial[address] ?? p.value)
                try node.setAutomation(timeline, for: address.description)
            } catch {
                throw .invalidProperty(node: node.id, name: "automation.\(address)", reason: "\(error)")
            }
        }
        return node
    }

    /// An ``AudioGraphError`` from building or resolving a described graph, with the JSON location
    /// of the node, connection or update it came from (`nodes[2] (id "echo")`, `connections[0]`,
    /// `updates[1].actions[0]`).
    package struct LocatedError: Error {
        /// The engine's error.
        package var error: AudioGraphError
        /// Where in the file.
        package var location: String

        package init(_ error: AudioGraphError, at location: String) {
            self.error = error
            self.location = location
        }
    }

    /// An open graph with every node of `description` created and connected (what AudioGraphOffline's `GraphLoader.build`
    /// initializes, and what the graph-file validator resolves: one assembly for both).
    /// - Throws: the engine's error with the JSON location of the node or connection it came from.
    package static func assemble(_ d: GraphDescription, maximumFramesPerSlice: Int? = nil, outputs: OutputPlacement,
                         prepare: ((GraphNode) -> Void)? = nil) throws(LocatedError) -> AudioGraph {
        let graph = AudioGraph(sampleRate: d.sampleRate,
                               maximumFramesPerSlice: maximumFramesPerSlice ?? d.maximumFramesPerSlice)
        for (index, n) in d.nodes.enumerated() {
            do {
                let node = try makeNode(n, sampleRate: d.sampleRate, outputs: outputs)
                prepare?(node)
                try graph.addNode(node)
            } catch {
                throw LocatedError(error, at: "nodes[\(index)] (id \"\(n.id)\")")
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
                throw LocatedError(error, at: "connections[\(index)]")
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
                list.append(.addNode(try makeNode(n, sampleRate: sampleRate, outputs: outputs)))
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
