// Creating engine nodes from node descriptions: the one place that maps types to classes.
import AudioGraphNodes
import AudioGraphPlugins
import AudioGraphPulse

/// Where a graph's output goes: the described node, a generic output (offline rendering), or a
/// PulseAudio output (live playback; `device` overrides the sink).
public enum OutputPlacement: Sendable, Hashable {
    /// `output` nodes become PulseAudio outputs, `genericOutput` nodes generic outputs.
    case asDescribed
    /// Every output node becomes a generic output (`audiograph render`).
    case offline
    /// Every output node becomes a PulseAudio output on `device` (nil: the node's, else the default).
    case live(device: String?)
}

/// Creates stock nodes from their descriptions.
///
/// Thread safety: control threads only (creating a player probes its file).
public enum NodeFactory {
    /// A node for `description` with its initial parameter values and automation set.
    ///
    /// - Parameter outputs: what an output node becomes (see ``OutputPlacement``).
    public static func makeNode(_ description: NodeDescription, sampleRate: Double,
                                outputs: OutputPlacement = .asDescribed) throws(AudioGraphError) -> GraphNode {
        let node: GraphNode
        switch description.configuration {
        case .player(let p):
            node = try PlayerNode(id: description.id, sampleRate: sampleRate, properties: p)
        case .genericOutput(let p):
            if case .live(let device) = outputs {
                node = OutputNode(id: description.id, properties: OutputProperties(device: device))
            } else {
                node = GenericOutputNode(id: description.id, clientFormat: p.format.partialStreamFormat)
            }
        case .output(var p):
            switch outputs {
            case .offline:
                node = GenericOutputNode(id: description.id)
            case .live(let device):
                if let device { p.device = device }
                node = OutputNode(id: description.id, properties: p)
            case .asDescribed:
                node = OutputNode(id: description.id, properties: p)
            }
        case .environment(let p):
            node = EnvironmentNode(id: description.id, sampleRate: sampleRate, inputBusCount: description.inputBusCount,
                                       properties: p)
        case .eq(let p):
            node = EQNode(id: description.id, sampleRate: sampleRate, properties: p)
        case .lv2(let p):
            do throws(LV2Error) { node = try LV2Node(id: description.id, uri: p.plugin) } catch {
                throw .nodeSetupFailed(node: description.id, reason: error.description)
            }
        case .recorder(let p):
            // Offline, the renderer drains the ring after every render call (nothing lost); live,
            // the node's writer thread does.
            let delivery: LiveTap.Delivery = outputs == .offline ? .manual : .thread
            node = RecorderNode(id: description.id, path: p.path, sampleType: p.sampleType, delivery: delivery)
        case .unresolved:
            throw .invalidProperty(node: description.id, name: "type", reason: "the node's type is not known")
        case .registered(let r):
            node = try r.type.descriptor!.makeNode(NodeBuildContext(id: description.id, sampleRate: sampleRate,
                                                                    inputBusCount: description.inputBusCount, options: r.options,
                                                                    rendersOffline: outputs == .offline))
        case .input(let p):
            let input = InputNode(id: description.id, properties: p)
            // Rendered offline (or by a caller that attaches no server), a graph's input is silent
            // on purpose; live playback attaches a context and captures.
            if case .live = outputs {} else { input.rendersSilenceWithoutContext = true }
            node = input
        }
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
}
