// The format declarations of one node checked against each other and against its file (no
// propagation: the engine's own resolve step does that, see GraphChecker+EngineRules).
import AudioGraphCore

extension GraphChecker {
    /// Reports a node's `format` that contradicts the node's own properties or file (its type's
    /// ``NodeTypeDescriptor/checkFormat`` hook), or asks for what only a converter or a generic
    /// output produces. Whatever needs the formats that reach the node (rates, channels,
    /// conversions, cycles) is the engine's: the validator runs `AudioGraph`'s resolve step on
    /// the real nodes.
    func checkDeclaredFormat(of node: NodeDescription, at location: String) {
        let declared = node.format ?? FormatDescription()
        let formatLocation = DescriptionReader.join(location, "format")
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
        guard case .registered(let r) = node.configuration, let check = r.type.descriptor?.checkFormat else { return }
        check(r.options, NodeChecks(checker: self, node: node, location: location))
    }
}
