// The loader's checking stage: the file's whole-graph checks over a topology that updates change, then the engine's rules.
import AudioGraphCore


/// The loader's checking stage, in two steps. ``checkFile(data:fileName:baseDirectory:fileInfo:)``:
/// the reader decodes the document (types, keys, ranges, automation; ``DescriptionReader``), then
/// the whole-graph checks run over the graph's structure as updates change it — unique ids, one
/// output node, at most one input node, connection references, bus indices, one connection per
/// input bus, player files (through the injected `fileInfo`), taps, and the updates in time
/// order. The structural rules (duplicate id, missing node, bus range, taken input, disconnect,
/// output count) are the engine's own (``GraphStructure``, the one copy every front door uses);
/// this maps each problem to its JSON location and carries on, so one pass reports every problem
/// of a file. ``checkEngineRules(_:fileName:)`` (GraphChecker+EngineRules.swift): cycles, formats
/// and what updates may change, by the engine itself on the real nodes, once the file checks pass.
///
/// Thread safety: one instance per validation, used by the loading thread only; the static
/// entry points may be called from any thread but a render thread (they read files).
package final class GraphChecker {
    /// The graph as the engine would hold it at one moment: its structure (the engine's rules)
    /// and, for messages, each node's description, where it was defined and where each
    /// connection was made.
    struct Topology {
        var structure = GraphStructure()
        var nodes: [String: NodeDescription] = [:]
        var locations: [String: String] = [:]
        /// What feeds each connected input bus, as the file wrote it, and where.
        var inputs: [BusPoint: (from: BusReference, location: String)] = [:]

        var order: [String] { structure.order }

        mutating func add(_ node: NodeDescription, at location: String) {
            structure.commit(.addNode(node.shape))
            nodes[node.id] = node
            locations[node.id] = location
        }

        mutating func remove(_ id: String) {
            structure.commit(.removeNode(id))
            nodes[id] = nil
            locations[id] = nil
            inputs = inputs.filter { $0.key.node != id && $0.value.from.node != id }
        }
    }

    /// Decodes and checks a graph file's bytes (every problem, one line each): the first step.
    /// See ``GraphDescription/parse(data:fileName:baseDirectory:fileInfo:)``.
    package static func checkFile(data: [UInt8], fileName: String, baseDirectory: String,
                                  fileInfo: (String) throws -> AudioFileInfo) throws(GraphDescriptionErrors) -> ValidatedGraph {
        let root: JSONValue
        do {
            root = try JSONValue.parse(data)
        } catch {
            throw GraphDescriptionErrors([GraphDescriptionError(fileName: fileName, location: "", problem: .syntax(error))])
        }
        let reader = DescriptionReader(fileName: fileName, baseDirectory: baseDirectory)
        let graph = reader.decodeDocument(root)
        let result: ValidatedGraph = withoutActuallyEscaping(fileInfo) { fileInfo in
            let checker = GraphChecker(reader: reader, graph: graph, fileInfo: fileInfo)
            return checker.run()
        }
        var seen = Set<String>()
        let errors = reader.errors.filter { seen.insert($0.line).inserted }
        if !errors.isEmpty { throw GraphDescriptionErrors(errors) }
        return result
    }

    let reader: DescriptionReader
    var graph: GraphDescription
    let fileInfo: (String) throws -> AudioFileInfo
    var audioFiles: [String: AudioFileInfo] = [:]
    var unreadableFiles: [String: String] = [:]

    init(reader: DescriptionReader, graph: GraphDescription, fileInfo: @escaping (String) throws -> AudioFileInfo) {
        self.reader = reader
        self.graph = graph
        self.fileInfo = fileInfo
    }

    func report(_ location: String, _ problem: GraphDescriptionProblem) { reader.report(location, problem) }

    func run() -> ValidatedGraph {
        var topology = Topology()
        for (index, node) in graph.nodes.enumerated() {
            let location = reader.nodeLocationList[index]
            guard addable(node, at: DescriptionReader.join(location, "id"), in: topology) else { continue }
            checkFiles(of: node, at: location)
            checkDeclaredFormat(of: node, at: location)
            topology.add(node, at: location)
        }
        if reader.hasNodeList { checkNodeCounts(topology, at: "nodes") }
        for (index, connection) in graph.connections.enumerated() {
            connect(connection, at: reader.connectionLocations[index], in: &topology)
        }
        checkTaps(topology)
        simulateUpdates(topology)
        // The formats (and cycles) are the engine's: checkEngineRules fills them in.
        return ValidatedGraph(description: graph, formats: ResolvedFormats(), audioFiles: audioFiles)
    }

    // MARK: Nodes and files

    func checkNodeCounts(_ topology: Topology, at location: String) {
        if topology.order.count > GraphDescription.maximumNodeCount {
            report(location, .limitExceeded("\(topology.order.count) nodes are more than a graph may hold, \(GraphDescription.maximumNodeCount)"))
        }
        let outputs = topology.structure.outputIDs
        if outputs.count != 1 { report(location, .outputNodeCount(ids: outputs)) }
        // The types the graph has, in the order of NodeType.allCases (the order of the messages):
        // a type it does not have is within any maximum, and its descriptor is not made (making
        // them all was 3% of a 0.1 s render's profile samples).
        var present = Set<NodeType>()
        for id in topology.order { if let type = topology.nodes[id]?.type { present.insert(type) } }
        for type in NodeType.allCases where present.contains(type) {
            guard let maximum = type.descriptor?.maximumPerGraph else { continue }
            let ids = topology.order.filter { topology.nodes[$0]?.type == type }
            if ids.count > maximum { report(location, .nodeTypeCount(type: type.rawValue, ids: ids, maximum: maximum)) }
        }
    }

    /// The checks of the files a node's options name (its type's ``NodeTypeDescriptor/checkFiles``:
    /// a player's sound file, read once per path, and its segment; an environment's HRTF file).
    func checkFiles(of node: NodeDescription, at location: String) {
        guard case .registered(let r) = node.configuration, let check = r.type.descriptor?.checkFiles else { return }
        check(r.options, NodeChecks(checker: self, node: node, location: location))
    }

    func audioInfo(_ path: String, node: String, file: String, at location: String) -> AudioFileInfo? {
        if let info = audioFiles[path] { return info }
        if let reason = unreadableFiles[path] {
            report(location, .unreadableAudioFile(node: node, file: file, reason: reason))
            return nil
        }
        do {
            let info = try fileInfo(path)
            if !GraphDescription.sampleRateRange.contains(info.sampleRate) && info.sampleRate.isFinite && info.sampleRate > 0 {
                let r = GraphDescription.sampleRateRange
                let reason = "its rate, \(ParameterInfo.format(info.sampleRate)) Hz, is outside the rates accepted, \(ParameterInfo.format(r.lowerBound))...\(ParameterInfo.format(r.upperBound)) Hz"
                unreadableFiles[path] = reason
                report(location, .unreadableAudioFile(node: node, file: file, reason: reason))
                return nil
            }
            guard info.sampleRate > 0, info.sampleRate.isFinite, info.channels >= 1, info.frames >= 0 else {
                let reason = "it reports \(ParameterInfo.format(info.sampleRate)) Hz and \(info.channels) channels"
                unreadableFiles[path] = reason
                report(location, .unreadableAudioFile(node: node, file: file, reason: reason))
                return nil
            }
            audioFiles[path] = info
            return info
        } catch {
            let reason = String(describing: error)
            unreadableFiles[path] = reason
            report(location, .unreadableAudioFile(node: node, file: file, reason: reason))
            return nil
        }
    }

    // MARK: Connections

    /// Whether `node` may be added (its id is not taken: the engine's rule), reported at `idLocation` when not.
    func addable(_ node: NodeDescription, at idLocation: String, in topology: Topology) -> Bool {
        guard topology.structure.problems(.addNode(node.shape)).isEmpty else {
            report(idLocation, .duplicateIdentifier(node.id, firstUsedAt: topology.locations[node.id] ?? "nodes"))
            return false
        }
        return true
    }

    /// Adds a connection when the engine's rules allow it (both ends exist, the buses exist, the
    /// input bus is free); each problem is reported at the connection's `from` or `to`. A
    /// connection that closes a cycle is added: the engine's pass on the real nodes reports it.
    @discardableResult
    func connect(_ connection: ConnectionDescription, at location: String, in topology: inout Topology) -> Bool {
        if let parameter = connection.parameter {
            return connectParameter(connection, parameter, at: location, in: topology)
        }
        let to = BusPoint(node: connection.to.node, bus: connection.to.bus)
        let edit = StructuralEdit.connect(source: BusPoint(node: connection.from.node, bus: connection.from.bus), destination: to)
        var valid = true
        for (site, error) in topology.structure.problems(edit) {
            let at = DescriptionReader.join(location, site == .source ? "from" : "to")
            switch error {
            case .nodeNotFound(let id):
                valid = false
                if !reader.brokenNodeIDs.contains(id) { report(at, .missingNode(id)) }
            case let .busOutOfRange(node, scope, bus, count):
                valid = false
                report(at, .busOutOfRange(node: node, bus: bus, count: count, isInput: scope == .input))
            case let .inputAlreadyConnected(node, bus):
                let existing = topology.inputs[to]
                report(at, .inputBusTaken(node: node, bus: bus, by: existing.map { "\"\($0.from)\" in \($0.location)" } ?? "another connection"))
                return false
            default:
                // A cycle: reported by the engine's pass (checkEngineRules), at this connection.
                break
            }
        }
        guard valid else { return false }
        topology.structure.commit(edit)
        topology.inputs[to] = (connection.from, location)
        return true
    }

    /// Audio into a parameter (it takes no input bus): both nodes exist, the source bus exists and
    /// the parameter is the destination's. A cycle through it is the engine's pass's to report.
    func connectParameter(_ connection: ConnectionDescription, _ parameter: ParameterAddress, at location: String,
                          in topology: Topology) -> Bool {
        var valid = true
        let from = topology.nodes[connection.from.node]
        let to = topology.nodes[connection.to.node]
        if from == nil {
            valid = false
            if !reader.brokenNodeIDs.contains(connection.from.node) {
                report(DescriptionReader.join(location, "from"), .missingNode(connection.from.node))
            }
        }
        if to == nil {
            valid = false
            if !reader.brokenNodeIDs.contains(connection.to.node) {
                report(DescriptionReader.join(location, "to"), .missingNode(connection.to.node))
            }
        }
        if let from, connection.from.bus >= from.outputBusCount {
            valid = false
            report(DescriptionReader.join(location, "from"),
                   .busOutOfRange(node: from.id, bus: connection.from.bus, count: from.outputBusCount, isInput: false))
        }
        guard valid, let to else { return false }
        let names = to.parameterInfos(sampleRate: reader.sampleRate).map(\.address)
        guard names.contains(parameter) else {
            report(DescriptionReader.join(location, "parameter"),
                   .unknownParameter(address: parameter.description,
                                     reason: "\(to.type.rawValue) node \"\(to.id)\" has " + names.map(\.description).joined(separator: ", ")))
            return false
        }
        return true
    }

    // MARK: Taps

    func checkTaps(_ topology: Topology) {
        var everyNode = topology.nodes
        for update in graph.updates {
            for case .addNode(let node) in update.actions where everyNode[node.id] == nil { everyNode[node.id] = node }
        }
        var files: [String: String] = [:]
        // Recorders write files too (a type's ``NodeTypeDescriptor/writtenFiles``): no two writers
        // of one file, recorders first (in id order).
        for id in everyNode.keys.sorted() {
            guard case .registered(let r) = everyNode[id]!.configuration, let descriptor = r.type.descriptor else { continue }
            for written in descriptor.writtenFiles(r.options) {
                let location = DescriptionReader.join(DescriptionReader.join(reader.nodeLocations[id] ?? "nodes", "properties"), written.key)
                let resolved = FileSystemPath.resolved(written.path)
                if let first = files[resolved] {
                    report(location, .invalidValue("\"\(written.file)\" is already written by \(first)"))
                } else {
                    files[resolved] = location
                }
            }
        }
        for (index, tap) in graph.taps.enumerated() {
            let location = reader.tapLocations[index]
            // Compared as the file system sees them: `a.wav` and `./a.wav` are one file.
            let resolved = FileSystemPath.resolved(tap.path)
            if let first = files[resolved] {
                report(DescriptionReader.join(location, "file"), .invalidValue("\"\(tap.file)\" is already written by \(first)"))
            } else {
                files[resolved] = location
            }
            guard let node = everyNode[tap.node] else {
                if !reader.brokenNodeIDs.contains(tap.node) { report(DescriptionReader.join(location, "node"), .missingNode(tap.node)) }
                continue
            }
            if tap.bus >= node.outputBusCount {
                report(DescriptionReader.join(location, "bus"),
                       .busOutOfRange(node: node.id, bus: tap.bus, count: node.outputBusCount, isInput: false))
            }
        }
    }
}
