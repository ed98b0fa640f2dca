// Structure-aware fuzzing: the fuzzer's bytes choose a graph from a grammar of node types, keys, ranges and automation events.
import Foundation

/// Turns fuzzer bytes into graph-file text that is well-formed by construction: node types and
/// their parameters and properties from a dictionary, values mostly inside their ranges (now and
/// then at an edge or an extreme: subnormals, 1e300, the Float limits), connections that form a
/// DAG ending at the generic output, automation events and updates. Most such graphs load, so
/// the fuzzer exercises the renderer rather than the JSON reader (issue 22: 9-15 % of mutated
/// texts got past loading).
///
/// Thread safety: a value type used by one fuzzing thread.
struct GraphGrammar {
    private var bytes: [UInt8]
    private var position = 0

    init(_ data: UnsafeBufferPointer<UInt8>) { bytes = Array(data) }

    /// The next byte (0 once the input is used up, so every input makes a graph).
    private mutating func byte() -> Int {
        defer { position += 1 }
        return position < bytes.count ? Int(bytes[position]) : 0
    }

    private mutating func pick(_ n: Int) -> Int { n <= 1 ? 0 : byte() % n }

    /// Values a person or a fuzzer reaches for: edges, subnormals, huge numbers.
    static let interesting: [Double] = [0, 1, -1, 0.5, 2, 1e-320, 5e-324, 2.2250738585072014e-308, 1e-7, 1e300, -1e300,
                                        3.4028234663852886e38, -3.4028234663852886e38, 1.1754943508222875e-38, 1e7, 1e-45,
                                        48000, 44100, 24000, 0.999999, 1.000001, 65536, 4, 32, 0.25, 1.0 / 32]

    /// A number in `range` most of the time (an edge or an interesting value otherwise).
    private mutating func number(_ range: ClosedRange<Double>) -> Double {
        switch pick(16) {
        case 0: return range.lowerBound
        case 1: return range.upperBound
        case 2: return Self.interesting[pick(Self.interesting.count)]
        default:
            let fraction = Double(byte() << 8 | byte()) / 65535
            return range.lowerBound + (range.upperBound - range.lowerBound) * fraction
        }
    }

    private static func json(_ x: Double) -> String {
        if x == x.rounded() && abs(x) < 1e15 { return String(Int64(x)) }
        return "\(x)"
    }

    /// Node types with their parameters (name, range) and property choices.
    private static let types: [(type: String, parameters: [(String, ClosedRange<Double>)], properties: [String])] = [
        ("oscillator", [("frequency", 0...4000), ("amplitude", 0...1)],
         [#""waveform": "sine""#, #""waveform": "square""#, #""waveform": "sawtooth""#, #""waveform": "triangle""#,
          #""channels": 1"#, #""channels": 2"#, #""startTime": 0.001"#, #""stopTime": 0.005"#]),
        ("mixer", [("volume", 0...1)], []),
        ("eq", [("globalGain", -96...24)],
         [#""bands": [ { "type": "peak", "frequency": 1000, "gain": 6, "q": 1 } ]"#,
          #""bands": [ { "type": "lowPass", "frequency": 100 }, { "type": "highShelf", "frequency": 8000, "gain": -12 } ]"#,
          #""bands": [ { "type": "bandPass", "frequency": 3999, "q": 0.1 } ]"#]),
        ("delay", [("delayTime", 0...2), ("feedback", -100...100), ("lowPassCutoff", 10...4000), ("wetDryMix", 0...100)], []),
        ("varispeed", [("rate", 0.25...4)], []),
        // Rates up to 8 (32 now and then, from `interesting`): a chain at the 1024 bound in a sanitized
        // debug build outlasts libFuzzer's 10 s timeout (the bound itself is tested in the suite).
        ("timePitch", [("rate", (1.0 / 32)...8), ("pitch", -2400...2400), ("overlap", 3...32)], []),
        ("reverb", [("wetDryMix", 0...100)], [#""preset": "plate""#, #""preset": "cathedral""#]),
        ("converter", [], [#""format": { "sampleRate": 44100 }"#, #""format": { "channels": 1 }"#, #""format": { "sampleRate": 8000, "channels": 2 }"#]),
        ("environment", [("listener.x", -100...100), ("input.0.x", -100...100), ("input.0.occlusion", -100...0),
                         ("input.0.obstruction", -100...0), ("input.0.reverbBlend", 0...1)],
         [#""reverb": { "enabled": true, "preset": "largeHall" }"#, #""distanceModel": { "model": "linear" }"#]),
        ("lv2", [("gain", -70...70)], [#""plugin": "http://plugin.org.uk/swh-plugins/amp""#]),
    ]

    private static let events = ["setValueAtTime", "linearRampToValueAtTime", "exponentialRampToValueAtTime",
                                 "setTargetAtTime", "setValueCurveAtTime", "cancelScheduledValues"]

    /// One automation event for a parameter of `range`.
    private mutating func event(_ range: ClosedRange<Double>) -> String {
        let name = Self.events[pick(Self.events.count)]
        let time = Self.json(pick(4) == 0 ? Self.interesting[pick(Self.interesting.count)] : number(0...0.02))
        let value = Self.json(number(range))
        switch name {
        case "setTargetAtTime":
            return #"{ "setTargetAtTime": { "target": \#(value), "startTime": \#(time), "timeConstant": \#(Self.json(number(0...0.01))) } }"#
        case "setValueCurveAtTime":
            let values = (0..<(2 + pick(4))).map { _ in Self.json(number(range)) }.joined(separator: ", ")
            return #"{ "setValueCurveAtTime": { "values": [ \#(values) ], "startTime": \#(time), "duration": \#(Self.json(number(0...0.01))) } }"#
        case "cancelScheduledValues":
            return #"{ "cancelScheduledValues": { "cancelTime": \#(time) } }"#
        default:
            return #"{ "\#(name)": { "value": \#(value), "time": \#(time) } }"#
        }
    }

    /// The graph: 1-6 nodes, each fed by an earlier one (sources first), the last into "out".
    mutating func graphText() -> String {
        let count = 1 + pick(6)
        var nodes: [String] = []
        var connections: [String] = []
        var automatable: [(id: String, name: String, range: ClosedRange<Double>)] = []
        for index in 0..<count {
            // The first node is a source; later ones mostly effects.
            let t = index == 0 ? Self.types[0] : Self.types[pick(Self.types.count)]
            let id = "n\(index)"
            var keys = [#""id": "\#(id)""#, #""type": "\#(t.type)""#]
            let parameters = t.parameters.filter { _ in pick(3) == 0 }.map { #""\#($0.0)": \#(Self.json(number($0.1)))"# }
            if !parameters.isEmpty { keys.append(#""parameters": { \#(parameters.joined(separator: ", ")) }"#) }
            var properties = t.properties.filter { $0.hasPrefix(#""plugin""#) }
            if !t.properties.isEmpty && pick(2) == 0 { properties.append(t.properties[pick(t.properties.count)]) }
            if !properties.isEmpty { keys.append(#""properties": { \#(Array(Set(properties)).sorted().joined(separator: ", ")) }"#) }
            if let p = t.parameters.first, pick(3) == 0 {
                let list = (0..<(1 + pick(4))).map { _ in event(p.1) }.joined(separator: ", ")
                keys.append(#""automation": { "\#(p.0)": [ \#(list) ] }"#)
            }
            for p in t.parameters { automatable.append((id, p.0, p.1)) }
            nodes.append("{ " + keys.joined(separator: ", ") + " }")
            if index > 0 && t.type != "oscillator" {
                connections.append(#"{ "from": "n\#(pick(index))", "to": "\#(id)" }"#)
            }
        }
        nodes.append(#"{ "id": "out", "type": "genericOutput" }"#)
        connections.append(#"{ "from": "n\#(count - 1)", "to": "out" }"#)
        var updates: [String] = []
        for _ in 0..<pick(3) where !automatable.isEmpty {
            let a = automatable[pick(automatable.count)]
            updates.append(#"{ "frame": \#(pick(480)), "actions": [ { "setParameter": { "node": "\#(a.id)", "address": "\#(a.name)", "value": \#(Self.json(number(a.range))) } } ] }"#)
        }
        let rate = [48000, 44100, 8000, 96000][pick(4)]
        return """
            { "version": 1, "sampleRate": \(rate), "duration": 0.01, "maximumFramesPerSlice": \([512, 64, 4096, 16][pick(4)]),
              "nodes": [ \(nodes.joined(separator: ", ")) ],
              "connections": [ \(connections.joined(separator: ", ")) ],
              "updates": [ \(updates.joined(separator: ", ")) ] }
            """
    }
}
