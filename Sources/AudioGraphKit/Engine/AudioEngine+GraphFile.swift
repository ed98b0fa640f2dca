// Loading a graph file into an engine (a Linux addition): its nodes become engine nodes.
import AudioGraphNodes
import AudioGraphPulse
import Foundation

extension AudioEngine {
    /// Makes an engine from a graph file (the format of [GraphFormat.md]): every node becomes an
    /// attached engine node named by its id (``node(named:)``), with its parameters and
    /// automation; the file's `output` or `genericOutput` becomes ``outputNode`` (its device and
    /// latency kept), its `input` ``inputNode``; the connections are the engine's. The engine runs
    /// at the output device's rate (or the manual rendering format's): mixers, environments and
    /// converters convert file rates as in `audiograph play`. The file's timed `updates` and
    /// `taps` are for `audiograph render`/`play` and are not applied here.
    ///
    /// - Throws: ``AudioEngineError/graphFile(path:problems:)`` with one line per problem naming
    ///   the file and the place, as `audiograph validate` prints them.
    public convenience init(contentsOf url: URL) throws(AudioEngineError) {
        self.init()
        let validated: ValidatedGraph
        do {
            validated = try GraphLoader.load(url.path)
        } catch {
            throw .graphFile(path: url.path, problems: error.description)
        }
        var byID: [String: AudioNode] = [:]
        for d in validated.description.nodes {
            // The engine's own output and input stand for the file's (their engine-API faces).
            if let p = d.configuration.options(as: OutputProperties.self) {
                let output = outputNode
                output.setDevice(p.device)
                output.requestedLatency = p.latency
                byID[d.id] = output
            } else if d.schema.kind == .output {
                byID[d.id] = outputNode
            } else if let p = d.configuration.options(as: InputProperties.self) {
                let input = inputNode
                input.setDevice(p.device)
                input.requestedLatency = p.latency
                byID[d.id] = input
            } else {
                let node = DescribedNode(description: d)
                withLock { register(node, id: d.id) }
                byID[d.id] = node
            }
        }
        withLock { namedNodes = byID }
        for c in validated.description.connections {
            guard let from = byID[c.from.node], let to = byID[c.to.node] else { continue }
            if let parameter = c.parameter {
                connect(from, to: to.parameter(parameter.description), fromBus: c.from.bus)
            } else {
                connect(from, to: to, fromBus: c.from.bus, toBus: c.to.bus, format: nil)
            }
        }
    }

    /// The node a graph file named `id` (``init(contentsOf:)``), or an attached node whose
    /// graph id is `id`; nil when there is none.
    public func node(named id: String) -> AudioNode? {
        withLock { namedNodes[id] ?? attached.first { $0.graphID == id } }
    }
}

/// An engine node made from a graph file's node description: its graph node is the stock node
/// `GraphAssembly.makeNode` makes for the description (parameters and automation included).
///
/// Thread safety: the engine's.
public final class DescribedNode: AudioNode, AudioMixing, @unchecked Sendable {
    /// The description it was made from.
    package let nodeDescription: NodeDescription

    init(description: NodeDescription) {
        nodeDescription = description
        super.init(kindName: description.type.rawValue)
    }

    public override var numberOfInputs: Int { nodeDescription.inputBusCount }
    public override var numberOfOutputs: Int { nodeDescription.outputBusCount }

    /// The graph node's parameter `address` (`frequency`, `input.1.pan`, …): set it from any
    /// thread while the engine runs (nil before the engine is prepared).
    public func parameter(_ address: String) -> AudioParameter? { engine?.withLock { graphNode?.parameter(address) } }

    override func makeGraphNode(sampleRate: Double, maximumFrames: Int, outputFormat: StreamFormat?,
                                engineFormat: StreamFormat) throws(AudioGraphError) -> GraphNode {
        let node = try GraphAssembly.makeNode(nodeDescription, sampleRate: sampleRate, outputs: .asDescribed)
        if let outputFormat {
            node.declaredFormat.sampleRate = outputFormat.sampleRate
            node.declaredFormat.channelCount = outputFormat.channelCount
        }
        return node
    }
}
