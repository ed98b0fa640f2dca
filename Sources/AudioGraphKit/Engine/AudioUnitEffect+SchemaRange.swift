// The parameter ranges engine units check, read from the node schema (where they are defined once).
import AudioGraphNodes
import AudioGraphDescription

extension AudioUnitEffect {
    /// The range of parameter `name` of node type `type` as the node schema defines it (the
    /// graph file, the node and the engine unit all check this one range). Traps for a name the
    /// schema does not have (a programming error).
    static func schemaRange(_ type: NodeType, _ name: String) -> ClosedRange<Double> {
        let infos = NodeSchema.for(type).parameterInfos(sampleRate: 48000, inputBusCount: 0, bandCount: 0)
        let info = infos.first { $0.address.name == name }!
        return info.minValue...info.maxValue
    }
}
