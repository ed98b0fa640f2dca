// The checker's second step: the engine's own graph rules, run on the real nodes.
import AudioGraphCore

/// The second step: the graph rules of a graph file (connections, cycles, formats, updates),
/// checked by the engine itself: the real nodes are built as the file describes them (``GraphAssembly/makeNode(_:sampleRate:outputs:)``, placement
/// ``OutputPlacement/asDescribed``: an `output` node is the PulseAudio output, which opens nothing
/// before it starts; its rules are the stricter ones: a declared `format.sampleRate` on it refuses
/// an input at another rate, where the offline stand-in, a generic output, would take it), connected through ``AudioGraph``'s own edits, and resolved by
/// ``AudioGraph``'s resolve step (the one ``AudioGraph/initialize()`` runs before it allocates).
/// The updates are applied in time order (file order for equal frames, as the renderer applies
/// them) through the engine's pending changes, each entry resolved and held to the engine's rule
/// that a running node keeps its output format. So `validate`, `inspect` and `initialize` cannot
/// disagree: the file checks (schema, ranges, references, files) stay in the first step, and
/// whatever the engine refuses is reported as the engine's error at the JSON
/// location of the node, connection or update it came from.
///
/// Thread safety: control threads (creating a player opens its file).
extension GraphChecker {
    /// `validated` with the formats the engine resolved for its initial graph.
    /// - Throws: the engine's first refusal (or a graph beyond the memory budget), one line naming
    ///   `fileName` and the place.
    package static func checkEngineRules(_ validated: ValidatedGraph, fileName: String) throws(GraphDescriptionErrors) -> ValidatedGraph {
        var result = validated
        do {
            result.formats = try resolve(validated.description, fileName: fileName)
        } catch {
            throw GraphDescriptionErrors([error])
        }
        return result
    }

    /// The engine's formats for `d`'s initial graph, after checking every update against the
    /// engine's rules.
    static func resolve(_ d: GraphDescription, fileName: String) throws(GraphDescriptionError) -> ResolvedFormats {
        func refusal(_ error: AudioGraphError, at location: String) -> GraphDescriptionError {
            GraphDescriptionError(fileName: fileName, location: location, problem: .engine(error))
        }
        let graph: AudioGraph
        do {
            graph = try GraphAssembly.assemble(d, outputs: .asDescribed)
        } catch {
            throw refusal(error.error, at: error.location)
        }
        // A tap's bus against the real node (a channel splitter has as many outputs as its
        // `outputs` property says, fewer than its type's most).
        for (index, tap) in d.taps.enumerated() {
            if let node = graph.node(tap.node), tap.bus >= node.outputBusCount {
                throw refusal(.busOutOfRange(node: tap.node, scope: .output, bus: tap.bus, count: node.outputBusCount), at: "taps[\(index)]")
            }
        }
        let initial: ResolvedBusFormats
        do {
            initial = try graph.resolve()
        } catch {
            throw refusal(error, at: location(of: error, in: d))
        }
        if let (location, message) = memoryProblem(initial, of: graph) {
            throw GraphDescriptionError(fileName: fileName, location: location, problem: .limitExceeded(message))
        }
        let result = described(initial, of: d, in: graph)
        var formats = initial
        let rate = d.sampleRate
        for index in d.updateOrder {
            let update = d.updates[index]
            var added = Set<String>()
            for (actionIndex, action) in update.actions.enumerated() {
                do {
                    let one = UpdateDescription(when: update.when, actions: [action])
                    graph.enqueue(contentsOf: try GraphAssembly.changes(for: one, sampleRate: rate, outputs: .asDescribed))
                    try graph.update()
                } catch {
                    throw refusal(error, at: "updates[\(index)].actions[\(actionIndex)]")
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
                throw refusal(error, at: "updates[\(index)]")
            }
            if let (_, message) = memoryProblem(formats, of: graph) {
                throw GraphDescriptionError(fileName: fileName, location: "updates[\(index)]", problem: .limitExceeded(message))
            }
        }
        return result
    }

    /// A graph whose delay lines or slice buffers would not fit in memory (``MemoryBudget``), at
    /// the formats the engine resolved: where and why, or nil.
    static func memoryProblem(_ resolved: ResolvedBusFormats, of graph: AudioGraph) -> (String, String)? {
        var delayBytes: Int64 = 0
        var bufferBytes: Int64 = 0
        var bufferNodes = 0
        let limit = MemoryBudget.describe(MemoryBudget.limit)
        for node in graph.nodes {
            guard let outputs = resolved.outputs[node.id], let format = outputs.first else { continue }
            bufferBytes = MemoryBudget.adding(bufferBytes, MemoryBudget.sliceBytes(channels: format.channelCount * outputs.count,
                                                                                 frames: graph.maximumFramesPerSlice))
            bufferNodes += 1
            guard let (bytes, reason) = node.stateMemoryEstimate(outputFormat: format) else { continue }
            if bytes > MemoryBudget.limit {
                return ("nodes", "node \"\(node.id)\" needs \(MemoryBudget.describe(bytes)) for \(reason), more than the \(limit) a graph may use (half this machine's memory)")
            }
            delayBytes = MemoryBudget.adding(delayBytes, bytes)
        }
        if delayBytes > MemoryBudget.limit {
            return ("nodes", "the nodes' delay lines and state need \(MemoryBudget.describe(delayBytes)) together, more than the \(limit) a graph may use (half this machine's memory)")
        }
        let total = MemoryBudget.adding(bufferBytes, delayBytes)
        if total > MemoryBudget.limit {
            return ("nodes", "the buffers of \(bufferNodes) nodes (\(graph.maximumFramesPerSlice) frames per slice per channel) and their delay lines need \(MemoryBudget.describe(total)), more than the \(limit) a graph may use (half this machine's memory)")
        }
        return nil
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
        case .formatNotSupported(let id, _), .nodeSetupFailed(let id, _), .libraryNotLoadable(let id, _, _), .cycle(let id), .nodeNotFound(let id),
             .duplicateNode(let id):
            return node(id)
        case .busOutOfRange(let id, _, _, _), .inputAlreadyConnected(let id, _), .inputNotConnected(let id, _),
             .parameterNotFound(let id, _), .parameterOutOfRange(let id, _, _, _), .invalidProperty(let id, _, _):
            return node(id)
        case .outputNodeCount, .invalidState, .notSupportedYet, .renderThreadsUnavailable:
            return "nodes"
        }
    }

    /// The engine's formats as the description's ``ResolvedFormats`` (what `inspect` prints).
    static func described(_ resolved: ResolvedBusFormats, of d: GraphDescription, in graph: AudioGraph) -> ResolvedFormats {
        func bus(_ f: StreamFormat) -> BusFormat {
            BusFormat(sampleRate: f.sampleRate, channels: f.channelCount, sampleType: f.sampleType, interleaved: f.isInterleaved)
        }
        var result = ResolvedFormats()
        // An input bus shows what arrives on its connection (the source's output), before the
        // conversion a mixer, environment or converter makes.
        var arriving: [String: [Int: StreamFormat]] = [:]
        for c in d.connections where c.parameter == nil {
            if let f = resolved.outputs[c.from.node]?[c.from.bus] { arriving[c.to.node, default: [:]][c.to.bus] = f }
        }
        for n in d.nodes {
            guard let resolvedInputs = resolved.inputs[n.id], let outputs = resolved.outputs[n.id] else { continue }
            let inputs = resolvedInputs.indices.map { arriving[n.id]?[$0] }
            var client: BusFormat?
            if let request = graph.node(n.id)?.requestedClientFormat, let input = inputs.first ?? nil {
                client = bus(request.filled(from: input))
            }
            result.nodes[n.id] = NodeFormats(inputs: inputs.map { $0.map(bus) }, outputs: outputs.map(bus), clientFormat: client)
        }
        return result
    }
}
