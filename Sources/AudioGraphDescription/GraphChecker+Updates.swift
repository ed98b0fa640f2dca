// Applying the updates to a simulated topology: each entry's actions must leave a valid graph.
import AudioGraphCore

extension GraphChecker {
    /// Applies the updates in time order (file order for equal frames), reporting every action
    /// that cannot apply (references, buses, ids, properties, parameter values). Fills in the
    /// resulting configuration of `setProperty` actions. Cycles and formats after each entry are
    /// the engine's rules (checkEngineRules applies the updates to the real graph).
    func simulateUpdates(_ initial: Topology) {
        var topology = initial
        for index in graph.updateOrder {
            let location = reader.updateLocations[index]
            let actionLocations = reader.actionLocations[location] ?? []
            for (actionIndex, action) in graph.updates[index].actions.enumerated() {
                let at = actionIndex < actionLocations.count ? actionLocations[actionIndex] : location
                if let configuration = apply(action, at: at, in: location, to: &topology),
                   case .setProperty(let node, let name, let value, _) = action {
                    graph.updates[index].actions[actionIndex] = .setProperty(node: node, name: name, value: value,
                                                                              configuration: configuration)
                }
            }
            checkNodeCounts(topology, at: location)
        }
    }

    /// Applies one action; returns the new configuration for a `setProperty`. `updateLocation`
    /// is where the entry is (cycles are reported there).
    private func apply(_ action: UpdateAction, at location: String, in updateLocation: String,
                       to topology: inout Topology) -> NodeConfiguration? {
        func join(_ key: String) -> String { DescriptionReader.join(location, key) }
        func existing(_ id: String, at key: String) -> NodeDescription? {
            if let node = topology.nodes[id] { return node }
            if !reader.brokenNodeIDs.contains(id) { report(key, .missingNode(id)) }
            return nil
        }
        switch action {
        case .setParameter(let id, let address, let value, _):
            guard let node = existing(id, at: join("node")),
                  let (_, info) = reader.parameter(address.description, of: node, at: join("address")) else { return nil }
            _ = reader.checkParameterValue(value, info, at: join("value"))
        case .connect(let connection):
            connect(connection, at: location, in: &topology)
        case .disconnect(let to):
            let point = BusPoint(node: to.node, bus: to.bus)
            for (_, error) in topology.structure.problems(.disconnect(point)) {
                switch error {
                case .nodeNotFound(let id):
                    if !reader.brokenNodeIDs.contains(id) { report(join("to"), .missingNode(id)) }
                case let .busOutOfRange(node, _, bus, count):
                    report(join("to"), .busOutOfRange(node: node, bus: bus, count: count, isInput: true))
                default:
                    report(join("to"), .invalidUpdate("nothing is connected to \"\(to)\" at this point"))
                }
                return nil
            }
            topology.structure.commit(.disconnect(point))
            topology.inputs[point] = nil
        case .addNode(let node):
            guard addable(node, at: join("id"), in: topology) else { return nil }
            checkFiles(of: node, at: location)
            checkDeclaredFormat(of: node, at: location)
            topology.add(node, at: location)
        case .removeNode(let id):
            if case .nodeNotFound = topology.structure.problems(.removeNode(id)).first?.error {
                if !reader.brokenNodeIDs.contains(id) { report(location, .missingNode(id)) }
                return nil
            }
            topology.remove(id)
        case .setProperty(let id, let name, let value, _):
            guard var node = existing(id, at: join("node")) else { return nil }
            let schema = node.schema
            guard schema.runtimePropertyKeys.contains(name) else {
                let changeable = schema.runtimePropertyKeys.isEmpty ? "none"
                    : schema.runtimePropertyKeys.joined(separator: ", ")
                let what = schema.propertyKeys.contains(name) ? "cannot change while the graph runs" : "is not a property of this node type"
                report(join("name"), .invalidUpdate("\"\(name)\" of a \(node.type.rawValue) node \(what) (changeable: \(changeable))"))
                return nil
            }
            let before = reader.errors.count
            _ = reader.decodeConfiguration(node.type, JSONObject([JSONMember(key: name, value: value)]), at: location,
                                         partial: true)
            guard reader.errors.count == before else { return nil }
            var properties = node.properties
            properties[name] = value
            // Decoded whole again: rules between keys (stopTime after startTime) apply too.
            let configuration = reader.decodeConfiguration(node.type, properties, at: location)
            guard reader.errors.count == before else { return nil }
            // The type's file checks on the changed value (files already read; problems at `value`).
            if case .registered(let r) = configuration, let check = r.type.descriptor?.checkFiles {
                check(r.options, NodeChecks(checker: self, node: node, location: location, changedValueLocation: join("value")))
                guard reader.errors.count == before else { return nil }
            }
            node.properties = properties
            node.configuration = configuration
            topology.nodes[id] = node
            return configuration
        }
        return nil
    }
}
