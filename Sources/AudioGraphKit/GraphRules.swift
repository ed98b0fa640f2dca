// The graph-file validator's graph rules: the engine's own, run on the real nodes.
import AudioGraphNodes

/// The graph rules of a graph file (connections, cycles, formats, updates), checked by the engine
/// itself: the real nodes are built (``NodeFactory``, offline placement: an output node becomes a
/// generic output, whose format rules are the PulseAudio output's: it takes its input at any rate
/// and produces nothing), connected through ``AudioGraph``'s own edits, and resolved by
/// ``AudioGraph``'s resolve step (the one ``AudioGraph/initialize()`` runs before it allocates).
/// The updates are applied in time order (file order for equal frames, as the renderer applies
/// them) through the engine's pending changes, each entry resolved and held to the engine's rule
/// that a running node keeps its output format. So `validate`, `inspect` and `initialize` cannot
/// disagree: the file checks (schema, ranges, references, files) stay in the description's
/// validator, and whatever the engine refuses is reported as the engine's error at the JSON
/// location of the node, connection or update it came from.
///
/// Thread safety: stateless; control threads (creating a player opens its file).
enum GraphRules {
    /// `validated` with the formats the engine resolved for its initial graph.
    /// - Throws: the engine's first refusal, one line naming `fileName` and the place.
    static func check(_ validated: ValidatedGraph, fileName: String) throws(GraphDescriptionErrors) -> ValidatedGraph {
        var result = validated
        do {
            result.formats = try resolve(validated.description)
        } catch {
            throw GraphDescriptionErrors([GraphDescriptionError(fileName: fileName, location: error.location,
                                                                problem: .engine(error.error))])
        }
        return result
    }

    /// The engine's formats for `d`'s initial graph, after checking every update against the
    /// engine's rules.
    static func resolve(_ d: GraphDescription) throws(LocatedEngineError) -> ResolvedFormats {
        let graph = try GraphBuilder.assemble(d, outputs: .offline)
        let initial: ResolvedBusFormats
        do {
            initial = try graph.resolve()
        } catch {
            throw LocatedEngineError(error, at: location(of: error, in: d))
        }
        var formats = initial
        let rate = d.sampleRate
        let order = d.updates.indices.sorted {
            (d.updates[$0].when.frame(sampleRate: rate), $0) < (d.updates[$1].when.frame(sampleRate: rate), $1)
        }
        for index in order {
            let update = d.updates[index]
            var added = Set<String>()
            for (actionIndex, action) in update.actions.enumerated() {
                do {
                    let one = UpdateDescription(when: update.when, actions: [action])
                    graph.enqueue(contentsOf: try GraphBuilder.changes(for: one, sampleRate: rate, outputs: .offline))
                    try graph.update()
                } catch {
                    throw LocatedEngineError(error, at: "updates[\(index)].actions[\(actionIndex)]")
                }
                if case .addNode(let n) = action { added.insert(n.id) }
            }
            do {
                let next = try graph.resolve()
                for (id, after) in next.outputs where !added.contains(id) {
                    guard let before = formats.outputs[id] else { continue }
                    try AudioGraph.checkOutputFormatsKept(node: id, before: before, after: after)
                }
                formats = next
            } catch {
                throw LocatedEngineError(error, at: "updates[\(index)]")
            }
        }
        return described(initial, of: d, in: graph)
    }

    /// Where an engine error about the initial graph points: the connection for a rate mismatch,
    /// else the node it names, else the node list.
    static func location(of error: AudioGraphError, in d: GraphDescription) -> String {
        func node(_ id: String) -> String {
            guard let index = d.nodes.firstIndex(where: { $0.id == id }) else { return "nodes" }
            return "nodes[\(index)] (id \"\(id)\")"
        }
        switch error {
        case let .sampleRateMismatch(source, _, destination, _):
            if let index = d.connections.firstIndex(where: { $0.from.node == source && $0.to.node == destination }) {
                return "connections[\(index)]"
            }
            return node(destination)
        case .formatNotSupported(let id, _), .nodeSetupFailed(let id, _), .cycle(let id), .nodeNotFound(let id),
             .duplicateNode(let id):
            return node(id)
        case .busOutOfRange(let id, _, _, _), .inputAlreadyConnected(let id, _), .inputNotConnected(let id, _),
             .parameterNotFound(let id, _), .parameterOutOfRange(let id, _, _, _), .invalidProperty(let id, _, _):
            return node(id)
        case .outputNodeCount, .invalidState, .notSupportedYet:
            return "nodes"
        }
    }

    /// The engine's formats as the description's ``ResolvedFormats`` (what `inspect` prints).
    static func described(_ resolved: ResolvedBusFormats, of d: GraphDescription, in graph: AudioGraph) -> ResolvedFormats {
        func bus(_ f: StreamFormat) -> BusFormat {
            BusFormat(sampleRate: f.sampleRate, channels: f.channelCount, sampleType: f.sampleType, interleaved: f.isInterleaved)
        }
        var result = ResolvedFormats()
        for n in d.nodes {
            guard let inputs = resolved.inputs[n.id], let outputs = resolved.outputs[n.id] else { continue }
            var client: BusFormat?
            if case .genericOutput = n.configuration, let output = graph.node(n.id) as? GenericOutputNode,
               let input = inputs.first ?? nil {
                client = bus(output.clientFormatRequest.filled(from: input))
            }
            result.nodes[n.id] = NodeFormats(inputs: inputs.map { $0.map(bus) }, outputs: outputs.map(bus), clientFormat: client)
        }
        return result
    }
}
