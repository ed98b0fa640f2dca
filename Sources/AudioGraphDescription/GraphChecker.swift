// The whole-graph checks behind DescriptionValidator, over a topology that updates change.
import AudioGraphCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The whole-graph checks, over a simulated topology that updates change.
///
/// Thread safety: one instance per validation, used by the loading thread only.
final class GraphChecker {
    /// One input bus of one node.
    struct BusKey: Hashable {
        var node: String
        var bus: Int
    }

    /// The graph as the engine would hold it at one moment.
    struct Topology {
        var nodes: [String: NodeDescription] = [:]
        var order: [String] = []
        var locations: [String: String] = [:]
        /// What feeds each connected input bus, and where the connection was made.
        var inputs: [BusKey: (from: BusReference, location: String)] = [:]

        mutating func add(_ node: NodeDescription, at location: String) {
            nodes[node.id] = node
            order.append(node.id)
            locations[node.id] = location
        }

        mutating func remove(_ id: String) {
            nodes[id] = nil
            order.removeAll { $0 == id }
            locations[id] = nil
            inputs = inputs.filter { $0.key.node != id && $0.value.from.node != id }
        }
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
            if let first = topology.locations[node.id] {
                report(DescriptionReader.join(location, "id"), .duplicateIdentifier(node.id, firstUsedAt: first))
                continue
            }
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
        // The formats (and cycles) are the engine's: AudioGraphKit's GraphRules fills them in.
        return ValidatedGraph(description: graph, formats: ResolvedFormats(), audioFiles: audioFiles)
    }

    // MARK: Nodes and files

    func checkNodeCounts(_ topology: Topology, at location: String) {
        if topology.order.count > GraphDescription.maximumNodeCount {
            report(location, .limitExceeded("\(topology.order.count) nodes are more than a graph may hold, \(GraphDescription.maximumNodeCount)"))
        }
        let outputs = topology.order.filter { topology.nodes[$0]?.schema.kind == .output }
        if outputs.count != 1 { report(location, .outputNodeCount(ids: outputs)) }
        for type in NodeType.allCases {
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

    /// Adds a connection when both ends exist, the buses exist and the input bus is free.
    @discardableResult
    func connect(_ connection: ConnectionDescription, at location: String, in topology: inout Topology) -> Bool {
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
        if let to, connection.to.bus >= to.inputBusCount {
            valid = false
            report(DescriptionReader.join(location, "to"),
                   .busOutOfRange(node: to.id, bus: connection.to.bus, count: to.inputBusCount, isInput: true))
        }
        guard valid else { return false }
        let key = BusKey(node: connection.to.node, bus: connection.to.bus)
        if let existing = topology.inputs[key] {
            report(DescriptionReader.join(location, "to"),
                   .inputBusTaken(node: key.node, bus: key.bus, by: "\"\(existing.from)\" in \(existing.location)"))
            return false
        }
        topology.inputs[key] = (connection.from, location)
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
