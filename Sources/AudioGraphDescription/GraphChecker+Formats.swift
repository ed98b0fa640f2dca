// The format declarations of one node checked against each other and against its file (no
// propagation: the engine's own resolve step does that, see AudioGraphKit's GraphRules).
import AudioGraphCore
import AudioGraphNodes

extension GraphChecker {
    /// Reports a node's `format` that contradicts the node's own properties or file, or asks for
    /// what only a converter or a generic output produces. Whatever needs the formats that reach
    /// the node (rates, channels, conversions, cycles) is the engine's: the validator runs
    /// `AudioGraph`'s resolve step on the real nodes.
    func checkDeclaredFormat(of node: NodeDescription, at location: String) {
        let declared = node.format ?? FormatDescription()
        let formatLocation = DescriptionReader.join(location, "format")
        let propertiesLocation = DescriptionReader.join(location, "properties")
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
        func channels(property: Int, propertyGiven: Bool, what: String) {
            if propertyGiven, let declaredChannels = declared.channels, declaredChannels != property {
                report(DescriptionReader.join(formatLocation, "channels"),
                       .formatConflict("format declares \(declaredChannels) channels but \(what) is \(property)"))
            }
        }

        switch node.configuration {
        case .input(let properties):
            let mapped = properties.channelMap != nil
            channels(property: properties.outputChannelCount, propertyGiven: mapped || node.properties["channels"] != nil,
                         what: mapped ? "the channelMap's length" : "the property channels")
        case .registered(let r):
            if let properties = r.options as? MixerProperties {
                channels(property: properties.channels, propertyGiven: node.properties["channels"] != nil, what: "the property channels")
            } else if let properties = r.options as? OscillatorProperties {
                channels(property: properties.channels, propertyGiven: node.properties["channels"] != nil, what: "the property channels")
            } else if let properties = r.options as? ConverterProperties {
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
                if let map = properties.channelMap, let wanted = properties.format.channels ?? declared.channels, wanted != map.count {
                    report(DescriptionReader.join(propertiesLocation, "channelMap"),
                           .formatConflict("the channel map has \(map.count) entries but the output format has \(wanted) channels"))
                }
            }
        case .environment:
            channels(property: 2, propertyGiven: true, what: "an environment's output (stereo)")
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
        default:
            break
        }
    }
}
