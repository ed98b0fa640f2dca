// Format propagation from the sources to the output, with rate and channel mismatch checks.
import AudioGraphCore

extension GraphChecker {
    /// Reports a rate conversion beyond ``GraphDescription/maximumConversionRatio`` either way
    /// (the engine's resampler would refuse it when the graph is built).
    func checkConversion(from input: Double, to output: Double, at location: String, node: String) {
        let ratio = output / input
        let limit = GraphDescription.maximumConversionRatio
        guard !(ratio >= 1 / limit && ratio <= limit) else { return }
        report(location, .limitExceeded("node \"\(node)\" would convert \(ParameterInfo.format(input)) Hz to \(ParameterInfo.format(output)) Hz, beyond the largest ratio one conversion bridges (\(ParameterInfo.format(limit)):1 either way; convert in steps)"))
    }

    /// Propagates formats through an acyclic topology, reporting mismatches, and returns every
    /// resolved node's formats.
    func resolveFormats(_ topology: Topology) -> ResolvedFormats {
        let rate = graph.sampleRate
        // Kahn's algorithm, in node order for stable messages.
        var pending: [String: Int] = [:]
        var successors: [String: [String]] = [:]
        for id in topology.order { pending[id] = 0 }
        for (key, value) in topology.inputs {
            pending[key.node, default: 0] += 1
            successors[value.from.node, default: []].append(key.node)
        }
        var sorted = topology.order.filter { pending[$0] == 0 }
        var cursor = 0
        while cursor < sorted.count {
            let id = sorted[cursor]
            cursor += 1
            for next in successors[id] ?? [] {
                pending[next, default: 0] -= 1
                if pending[next] == 0 { sorted.append(next) }
            }
        }

        var outputs: [String: BusFormat] = [:]
        var result = ResolvedFormats()
        var delayBytes: Int64 = 0
        var delayReported = false
        // Each output bus holds one slice per channel (the engine's buffers, sized at initialize).
        var bufferBytes: Int64 = 0
        var bufferNodes = 0
        for id in sorted {
            guard let node = topology.nodes[id], let location = topology.locations[id] else { continue }
            let formatLocation = DescriptionReader.join(location, "format")
            let propertiesLocation = DescriptionReader.join(location, "properties")
            let declared = node.format ?? FormatDescription()
            var inputs: [BusFormat?] = []
            var unresolvedInput = false
            for bus in 0..<node.inputBusCount {
                if let connection = topology.inputs[BusKey(node: id, bus: bus)] {
                    let format = outputs[connection.from.node]
                    if format == nil { unresolvedInput = true }
                    inputs.append(format)
                } else {
                    inputs.append(nil)
                }
            }
            let input0 = topology.inputs[BusKey(node: id, bus: 0)]

            if node.schema.kind != .converter, node.schema.kind != .output {
                if let type = declared.sampleType, type != .float32 {
                    report(DescriptionReader.join(formatLocation, "sampleType"),
                           .formatConflict("inside the graph samples are float32; only a converter or a genericOutput produces \(type.rawValue)"))
                }
                if declared.interleaved == true {
                    report(DescriptionReader.join(formatLocation, "interleaved"),
                           .formatConflict("inside the graph buffers are non-interleaved; only a converter or a genericOutput produces interleaved samples"))
                }
            }

            /// The declared channel count, checked against a property that says otherwise.
            func channels(property: Int, propertyGiven: Bool, what: String) -> Int {
                guard let declaredChannels = declared.channels else { return property }
                if propertyGiven, declaredChannels != property {
                    report(DescriptionReader.join(formatLocation, "channels"),
                           .formatConflict("format declares \(declaredChannels) channels but \(what) is \(property)"))
                    return property
                }
                return declaredChannels
            }

            /// Mixer and environment inputs are converted to the node's rate as they arrive.
            func checkInputConversions(into nodeRate: Double) {
                for bus in 0..<inputs.count {
                    guard let input = inputs[bus], let connection = topology.inputs[BusKey(node: id, bus: bus)] else { continue }
                    checkConversion(from: input.sampleRate, to: nodeRate, at: connection.location, node: id)
                }
            }

            var output: BusFormat?
            var clientFormat: BusFormat?
            switch node.configuration {
            case .oscillator(let properties):
                output = BusFormat(sampleRate: declared.sampleRate ?? rate,
                                   channels: channels(property: properties.channels, propertyGiven: node.properties["channels"] != nil,
                                                      what: "the property channels"))
            case .input(let properties):
                let mapped = properties.channelMap != nil
                output = BusFormat(sampleRate: declared.sampleRate ?? rate,
                                   channels: channels(property: properties.outputChannelCount,
                                                      propertyGiven: mapped || node.properties["channels"] != nil,
                                                      what: mapped ? "the channelMap's length" : "the property channels"))
            case .mixer(let properties):
                output = BusFormat(sampleRate: declared.sampleRate ?? rate,
                                   channels: channels(property: properties.channels, propertyGiven: node.properties["channels"] != nil,
                                                      what: "the property channels"))
                checkInputConversions(into: output!.sampleRate)
            case .environment:
                output = BusFormat(sampleRate: declared.sampleRate ?? rate,
                                   channels: channels(property: 2, propertyGiven: true, what: "an environment's output (stereo)"))
                checkInputConversions(into: output!.sampleRate)
            case .player(let player):
                guard let info = audioFiles[player.path] else { break }
                if let declaredRate = declared.sampleRate, declaredRate != info.sampleRate {
                    report(DescriptionReader.join(formatLocation, "sampleRate"),
                           .formatConflict("the file \"\(player.file)\" is \(ParameterInfo.format(info.sampleRate)) Hz but the format declares \(ParameterInfo.format(declaredRate)) Hz (a player outputs its file's rate; put a converter after it)"))
                }
                if let declaredChannels = declared.channels, declaredChannels != info.channels {
                    report(DescriptionReader.join(formatLocation, "channels"),
                           .formatConflict("the file \"\(player.file)\" has \(info.channels) channels but the format declares \(declaredChannels)"))
                }
                output = BusFormat(sampleRate: info.sampleRate, channels: info.channels)
            case .lv2(let plugin) where !plugin.runsPerChannel && plugin.audioOutputs > 0:
                // A plugin with several audio ports: its input bus has exactly its audio inputs
                // (a generator, without any, ignores its input).
                if plugin.audioInputs > 0, let input = inputs[0], let connection = input0, input.channels != plugin.audioInputs {
                    report(connection.location, .channelMismatch(from: connection.from.node, fromChannels: input.channels, to: id,
                                                                 toChannels: plugin.audioInputs))
                }
                output = BusFormat(sampleRate: declared.sampleRate ?? inputs[0]?.sampleRate ?? rate, channels: plugin.audioOutputs)
            case .eq, .delay, .analyser, .recorder, .lv2, .timePitch, .reverb, .varispeed:
                if let input = inputs[0], let connection = input0 {
                    if let declaredRate = declared.sampleRate, declaredRate != input.sampleRate {
                        report(connection.location, .rateMismatch(from: connection.from.node, fromRate: input.sampleRate, to: id,
                                                                  toRate: declaredRate, toType: node.type))
                    }
                    if let declaredChannels = declared.channels, declaredChannels != input.channels {
                        report(connection.location, .channelMismatch(from: connection.from.node, fromChannels: input.channels, to: id,
                                                                     toChannels: declaredChannels))
                    }
                    output = BusFormat(sampleRate: declared.sampleRate ?? input.sampleRate, channels: declared.channels ?? input.channels)
                } else if !unresolvedInput {
                    output = BusFormat(sampleRate: declared.sampleRate ?? rate, channels: declared.channels ?? 2)
                }
                // A timePitch reads its input ahead of the clock (its own timeline); a capture cannot be.
                if node.type == .timePitch, let connection = input0, topology.nodes[connection.from.node]?.type == .input {
                    report(connection.location, .formatConflict("timePitch \"\(id)\" reads its input ahead of the clock; a live input (\"\(connection.from.node)\") cannot be read ahead"))
                }
                if node.type == .delay, let format = output {
                    let bytes = checkDelayMemory(format, node: id, at: location)
                    delayBytes = MemoryBudget.adding(delayBytes, bytes)
                    if bytes > MemoryBudget.limit { delayReported = true }
                }
            case .converter(let properties):
                let base = inputs[0] ?? (unresolvedInput ? nil : BusFormat(sampleRate: rate, channels: 2))
                guard let base else { break }
                var format = properties.format.applied(to: base)
                for (field, propertyValue, nodeValue) in [
                    ("sampleRate", properties.format.sampleRate.map { ParameterInfo.format($0) }, declared.sampleRate.map { ParameterInfo.format($0) }),
                    ("channels", properties.format.channels.map(String.init), declared.channels.map(String.init)),
                    ("sampleType", properties.format.sampleType?.rawValue, declared.sampleType?.rawValue),
                    ("interleaved", properties.format.interleaved.map { String($0) }, declared.interleaved.map { String($0) }),
                ] {
                    if let propertyValue, let nodeValue, propertyValue != nodeValue {
                        report(DescriptionReader.join(formatLocation, field),
                               .formatConflict("\(nodeValue) contradicts properties.format.\(field) \(propertyValue)"))
                    }
                }
                format = declared.applied(to: format)
                format = properties.format.applied(to: format)
                checkConversion(from: base.sampleRate, to: format.sampleRate,
                                at: DescriptionReader.join(DescriptionReader.join(propertiesLocation, "format"), "sampleRate"), node: id)
                if let map = properties.channelMap {
                    let mapLocation = DescriptionReader.join(propertiesLocation, "channelMap")
                    if let wanted = properties.format.channels ?? declared.channels, wanted != map.count {
                        report(mapLocation, .formatConflict("the channel map has \(map.count) entries but the output format has \(wanted) channels"))
                    }
                    format.channels = map.count
                    if let input = inputs[0] {
                        for (index, channel) in map.enumerated() where channel >= input.channels {
                            report(DescriptionReader.join(mapLocation, index: index),
                                   .invalidValue("input channel \(channel) does not exist (the input has \(input.channels) channel\(input.channels == 1 ? "" : "s"))"))
                        }
                    }
                }
                output = format
            case .output:
                if let input = inputs[0], let connection = input0 {
                    let nodeRate = declared.sampleRate ?? rate
                    if input.sampleRate != nodeRate {
                        report(connection.location, .rateMismatch(from: connection.from.node, fromRate: input.sampleRate, to: id,
                                                                  toRate: nodeRate, toType: .output))
                    }
                }
            case .genericOutput(let properties):
                // Nothing connected: the output renders silence at the graph's rate, in stereo.
                let input = inputs[0] ?? (unresolvedInput ? nil : BusFormat(sampleRate: rate, channels: 2))
                if let input {
                    clientFormat = properties.format.applied(to: declared.applied(to: input))
                    checkConversion(from: input.sampleRate, to: clientFormat!.sampleRate,
                                    at: DescriptionReader.join(DescriptionReader.join(propertiesLocation, "format"), "sampleRate"), node: id)
                }
            }
            if let output {
                outputs[id] = output
                bufferBytes = MemoryBudget.adding(bufferBytes, MemoryBudget.sliceBytes(channels: output.channels, frames: graph.maximumFramesPerSlice))
                bufferNodes += 1
            }
            if node.outputBusCount > 0, output == nil { continue }
            result.nodes[id] = NodeFormats(inputs: inputs, outputs: output.map { [$0] } ?? [], clientFormat: clientFormat)
        }
        if delayBytes > MemoryBudget.limit && !delayReported {
            report("nodes", .limitExceeded("the delay nodes need \(MemoryBudget.describe(delayBytes)) together, more than the \(MemoryBudget.describe(MemoryBudget.limit)) a graph may use (half this machine's memory)"))
        } else if !delayReported, MemoryBudget.adding(bufferBytes, delayBytes) > MemoryBudget.limit {
            report("nodes", .limitExceeded("the buffers of \(bufferNodes) nodes (\(graph.maximumFramesPerSlice) frames per slice per channel) and their delay lines need \(MemoryBudget.describe(MemoryBudget.adding(bufferBytes, delayBytes))), more than the \(MemoryBudget.describe(MemoryBudget.limit)) a graph may use (half this machine's memory)"))
        }
        return result
    }

    /// Reports a delay node whose delay line would not fit in memory; returns its bytes.
    func checkDelayMemory(_ format: BusFormat, node: String, at location: String) -> Int64 {
        let bytes = MemoryBudget.delayLineBytes(sampleRate: format.sampleRate, channels: format.channels)
        if bytes > MemoryBudget.limit {
            report(location, .limitExceeded("node \"\(node)\" needs \(MemoryBudget.describe(bytes)) for \(ParameterInfo.format(MemoryBudget.maximumDelayTime)) s of delay at \(ParameterInfo.format(format.sampleRate)) Hz × \(format.channels) channels, more than the \(MemoryBudget.describe(MemoryBudget.limit)) a graph may use (half this machine's memory)"))
        }
        return bytes
    }
}
