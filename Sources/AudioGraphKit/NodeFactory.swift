// Creating engine nodes from node descriptions: the one place that maps types to classes.
import AudioGraphNodes
import AudioGraphPulse

/// Creates stock nodes from their descriptions.
///
/// Thread safety: control threads only (creating a player probes its file).
public enum NodeFactory {
    /// A node for `description` with its initial parameter values and automation set.
    ///
    /// - Parameter replaceOutput: make a `genericOutput` in place of a PulseAudio `output`
    ///   (offline rendering of a live graph).
    public static func makeNode(_ description: NodeDescription, sampleRate: Double,
                                replaceOutput: Bool = false) throws(AudioGraphError) -> AudioNode {
        let node: AudioNode
        switch description.configuration {
        case .oscillator(let p):
            node = OscillatorNode(id: description.id, sampleRate: sampleRate, properties: p)
        case .player(let p):
            node = try PlayerNode(id: description.id, sampleRate: sampleRate, properties: p)
        case .mixer(let p):
            node = MixerNode(id: description.id, sampleRate: sampleRate, inputBusCount: description.inputBusCount, properties: p)
        case .genericOutput(let p):
            node = GenericOutputNode(id: description.id, clientFormat: p.format.partialStreamFormat)
        case .output(let p):
            node = replaceOutput ? GenericOutputNode(id: description.id) : OutputNode(id: description.id, properties: p)
        case .environment(let p):
            node = EnvironmentNode(id: description.id, sampleRate: sampleRate, inputBusCount: description.inputBusCount,
                                       properties: p)
        case .eq(let p):
            node = EQNode(id: description.id, sampleRate: sampleRate, properties: p)
        case .delay:
            node = DelayNode(id: description.id, sampleRate: sampleRate)
        case .converter(let p):
            node = ConverterNode(id: description.id, properties: p)
        case .input(let p):
            node = InputNode(id: description.id, properties: p)
        }
        if let f = description.format {
            let declared = f.partialStreamFormat
            if declared.sampleRate != nil { node.declaredFormat.sampleRate = declared.sampleRate }
            if declared.channelCount != nil { node.declaredFormat.channelCount = declared.channelCount }
        }
        let initial = description.initialParameterValues(sampleRate: sampleRate)
        for (address, value) in initial {
            guard let p = node.parameter(at: address) else { continue }
            try p.setValue(value)
        }
        for (address, events) in description.automation {
            guard let p = node.parameter(at: address) else { throw .parameterNotFound(node: node.id, address: address.description) }
            do {
                let timeline = try AutomationTimeline(events: events.map(\.automationEvent),
                                                      defaultValue: initial[address] ?? p.info.defaultValue)
                try node.setAutomation(timeline, for: address.description)
            } catch {
                throw .invalidProperty(node: node.id, name: "automation.\(address)", reason: "\(error)")
            }
        }
        return node
    }
}

extension FormatDescription {
    /// The same fields as an engine ``PartialStreamFormat``.
    public var partialStreamFormat: PartialStreamFormat {
        PartialStreamFormat(sampleRate: sampleRate, channelCount: channels, sampleType: sampleType, isInterleaved: interleaved)
    }
}

extension AutomationEventDescription {
    /// The engine's automation event for this description.
    public var automationEvent: AutomationEvent {
        switch self {
        case let .setValueAtTime(value, time): return .setValue(value: value, time: time)
        case let .linearRampToValueAtTime(value, time): return .linearRamp(value: value, time: time)
        case let .exponentialRampToValueAtTime(value, time): return .exponentialRamp(value: value, time: time)
        case let .setTargetAtTime(target, startTime, timeConstant):
            return .setTarget(target: target, startTime: startTime, timeConstant: timeConstant)
        case let .setValueCurveAtTime(values, startTime, duration):
            return .setValueCurve(values: values, startTime: startTime, duration: duration)
        case .cancelScheduledValues(let cancelTime): return .cancelScheduledValues(cancelTime: cancelTime)
        }
    }
}
